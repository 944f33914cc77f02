package trust

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/plugkit/plugkit/internal/boundedfile"
)

// ErrPassword means an encrypted private key did not decrypt with the
// password given.
var ErrPassword = errors.New("wrong password for the encrypted private key")

// MaxKeyFileBytes bounds a key file; real ones are under 4 KiB.
const MaxKeyFileBytes = 64 << 10

// PublicKey is a verification key and the names it goes by.
type PublicKey struct {
	// Name says where the key came from (its file path, as given).
	Name string
	// ID is cosign's public-key hint: the standard base64 of the SHA-256 of
	// the key's PKIX DER encoding. Bundles signed with the key carry it.
	ID string
	// Key is an *ecdsa.PublicKey, ed25519.PublicKey or *rsa.PublicKey.
	Key crypto.PublicKey
}

// ParsePublicKey reads a PEM "PUBLIC KEY" (PKIX) block, what cosign writes to
// cosign.pub. name is kept to say which key verified a signature.
func ParsePublicKey(name string, pemBytes []byte) (*PublicKey, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PEM public key: %w", name, err)
	}
	if err := checkKeyType(pub); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return newPublicKey(name, pub)
}

// LoadPublicKey reads a PEM public key file.
func LoadPublicKey(path string) (*PublicKey, error) {
	b, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePublicKey(path, b)
}

func newPublicKey(name string, pub crypto.PublicKey) (*PublicKey, error) {
	id, err := keyHint(pub)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &PublicKey{Name: name, ID: id, Key: pub}, nil
}

// PEM returns the key as a PEM "PUBLIC KEY" block.
func (k *PublicKey) PEM() ([]byte, error) { return cryptoutils.MarshalPublicKeyToPEM(k.Key) }

// keyHint is what cosign and sigstore-go put in a bundle's
// verificationMaterial.publicKey.hint.
func keyHint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}

// checkKeyType accepts the keys Sigstore's algorithm registry can use.
func checkKeyType(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
			return nil
		}
		return fmt.Errorf("unsupported ECDSA curve %s (use P-256, P-384 or P-521)", k.Curve.Params().Name)
	case ed25519.PublicKey:
		return nil
	case *rsa.PublicKey:
		switch k.Size() * 8 {
		case 2048, 3072, 4096:
			return nil
		}
		return fmt.Errorf("unsupported RSA key size %d bits (use 2048, 3072 or 4096)", k.Size()*8)
	}
	return fmt.Errorf("unsupported key type %T (use ECDSA P-256 or Ed25519)", pub)
}

// PrivateKey is a signing key loaded from a PKCS#8 PEM file or from cosign's
// encrypted key file.
type PrivateKey struct {
	// Public is the matching verification key; its ID is the hint that
	// signatures carry.
	Public *PublicKey
	signer crypto.Signer
}

// ParsePrivateKey reads a private key: an unencrypted PKCS#8 "PRIVATE KEY"
// (ECDSA, Ed25519 or RSA), or cosign's "ENCRYPTED SIGSTORE PRIVATE KEY"
// (scrypt and NaCl secretbox, what `cosign generate-key-pair` writes; the
// older "ENCRYPTED COSIGN PRIVATE KEY" too). password is called only for an
// encrypted key; an empty password is a valid one. A wrong password gives an
// error matching ErrPassword.
func ParsePrivateKey(name string, pemBytes []byte, password func() ([]byte, error)) (*PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, fmt.Errorf("%s: not a PEM private key", name)
	}
	var pf cryptoutils.PassFunc
	switch block.Type {
	case string(cryptoutils.PrivateKeyPEMType):
	case string(cryptoutils.EncryptedSigstorePrivateKeyPEMType), "ENCRYPTED COSIGN PRIVATE KEY":
		if password == nil {
			return nil, fmt.Errorf("%s: the key is encrypted and no password was given", name)
		}
		pw, err := password()
		if err != nil {
			return nil, fmt.Errorf("%s: reading the password: %w", name, err)
		}
		if pw == nil {
			pw = []byte{} // cryptoutils skips decryption for a nil password
		}
		pf = cryptoutils.StaticPasswordFunc(pw)
	case "EC PRIVATE KEY", "RSA PRIVATE KEY":
		return nil, fmt.Errorf("%s: unsupported PEM block %q: convert it to PKCS#8 with `openssl pkcs8 -topk8 -nocrypt -in KEY`, or use a cosign key", name, block.Type)
	default:
		return nil, fmt.Errorf("%s: unsupported PEM block %q (want PRIVATE KEY or ENCRYPTED SIGSTORE PRIVATE KEY)", name, block.Type)
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, pf)
	if err != nil {
		if pf != nil && isDecryptError(err) {
			return nil, fmt.Errorf("%s: %w", name, ErrPassword)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s, ok := priv.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: unsupported private key type %T", name, priv)
	}
	if err := checkKeyType(s.Public()); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pub, err := newPublicKey(name, s.Public())
	if err != nil {
		return nil, err
	}
	return &PrivateKey{Public: pub, signer: s}, nil
}

// isDecryptError tells a secretbox that did not open, which is what a wrong
// password looks like, from a malformed file. go-securesystemslib exports
// no sentinel for it, only this message.
func isDecryptError(err error) bool {
	return strings.Contains(err.Error(), "encrypted: decryption failed")
}

// LoadPrivateKey reads a private key file; see ParsePrivateKey.
func LoadPrivateKey(path string, password func() ([]byte, error)) (*PrivateKey, error) {
	b, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePrivateKey(path, b, password)
}

func readKeyFile(path string) ([]byte, error) {
	return boundedfile.Read(path, MaxKeyFileBytes, "MaxKeyFileBytes")
}

// GenerateKeyPair makes a new ECDSA P-256 key pair in cosign's format: the
// private key encrypted with password (scrypt and NaCl secretbox, an empty
// password allowed) as "ENCRYPTED SIGSTORE PRIVATE KEY", and the public key
// as PEM "PUBLIC KEY".
func GenerateKeyPair(password []byte) (privPEM, pubPEM []byte, err error) {
	if password == nil {
		password = []byte{}
	}
	return cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
}

// keypair is a loaded key with the algorithm it signs with. Ed25519 signs DSSE envelopes
// with pure Ed25519 and bare messages with Ed25519ph, as Sigstore's
// algorithm registry and cosign do.
type keypair struct {
	key    *PrivateKey
	alg    signature.AlgorithmDetails
	signer signature.Signer
}

func (k *PrivateKey) keypair(message bool) (*keypair, error) {
	var opts []signature.LoadOption
	if message {
		opts = append(opts, options.WithED25519ph())
	}
	alg, err := signature.GetDefaultAlgorithmDetails(k.signer.Public(), opts...)
	if err != nil {
		return nil, err
	}
	s, err := signature.LoadSignerFromAlgorithmDetails(k.signer, alg, opts...)
	if err != nil {
		return nil, err
	}
	return &keypair{key: k, alg: alg, signer: s}, nil
}

// SignData returns the signature and the digest a message-signature bundle
// records (the data itself for pure Ed25519, which signs no digest).
func (p *keypair) SignData(ctx context.Context, data []byte) ([]byte, []byte, error) {
	sig, err := p.signer.SignMessage(bytes.NewReader(data), options.WithContext(ctx))
	if err != nil {
		return nil, nil, err
	}
	digest := data
	if hf := p.alg.GetHashType(); hf != crypto.Hash(0) {
		h := hf.New()
		h.Write(data)
		digest = h.Sum(nil)
	}
	return sig, digest, nil
}

// verifierFor loads the verifier of pub for a DSSE envelope or, when
// message is true, for a bare message signature.
func verifierFor(pub crypto.PublicKey, message bool) (signature.Verifier, error) {
	var opts []signature.LoadOption
	if message {
		opts = append(opts, options.WithED25519ph())
	}
	return signature.LoadDefaultVerifier(pub, opts...)
}

// keyMaterial is trusted material holding exactly one key, whatever hint a
// bundle carries: a hint is unauthenticated, so a bundle whose hint names
// another key is still checked against this one (cosign does the same).
func keyMaterial(pub *PublicKey, message bool) (root.TrustedMaterial, error) {
	v, err := verifierFor(pub.Key, message)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pub.Name, err)
	}
	ek := root.NewExpiringKey(v, time.Time{}, time.Time{})
	return root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return ek, nil }), nil
}
