package trust_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/trust"
)

// Verify the signature cosign made of a plugin in an air-gap tar.
func ExampleVerifier_VerifyOCI() {
	ctx := context.Background()
	layout, err := oci.OpenLayout(ctx, "testdata/cosign/signed-plugin.tar", false)
	if err != nil {
		panic(err)
	}
	manifest, err := oci.Resolve(ctx, layout, "1.2.0")
	if err != nil {
		panic(err)
	}
	key, err := trust.LoadPublicKey("testdata/cosign/cosign.pub")
	if err != nil {
		panic(err)
	}
	v := &trust.Verifier{Keys: []*trust.PublicKey{key}}
	report, err := v.VerifyOCI(ctx, layout, manifest)
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	for _, s := range report.Valid() {
		fmt.Println("signed by", s.Signer)
	}
	// Output:
	// signed by key testdata/cosign/cosign.pub
}

// Check a file against its detached bundle, as cosign verify-blob does.
func ExampleVerifier_VerifyBlob() {
	blob, _ := os.ReadFile("testdata/cosign/blob.txt")
	bundle, _ := os.ReadFile("testdata/cosign/blob.sigstore.json")
	key, err := trust.LoadPublicKey("testdata/cosign/other.pub")
	if err != nil {
		panic(err)
	}
	_, err = (&trust.Verifier{Keys: []*trust.PublicKey{key}}).VerifyBlob(bytes.NewReader(blob), bundle)
	fmt.Println(err != nil)
	// Output:
	// true
}

// An installer applies the policy to every plugin it is about to install.
func ExamplePolicy_Admit() {
	dir, _ := os.MkdirTemp("", "policy")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "policy.yaml")
	os.WriteFile(file, []byte(`rules:
  - name: release-*
    method: digest
    digests: ["sha256:a81d6d7d5c9bda9cdce2f95911cca9442fda4c320501719949742448cb05d8b4"]
`), 0o644)
	policy, err := trust.LoadPolicy(file)
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"release-notes", "other"} {
		d, err := policy.Admit(context.Background(), &trust.Candidate{
			Name: name, Source: trust.SourceBackplane,
			Digest: "sha256:a81d6d7d5c9bda9cdce2f95911cca9442fda4c320501719949742448cb05d8b4",
		})
		if err != nil {
			fmt.Println("refused:", name)
			continue
		}
		fmt.Printf("admitted %s by rule %d (%s)\n", name, d.Rule.Index, d.Rule.Method)
	}
	// Output:
	// admitted release-notes by rule 1 (digest)
	// refused: other
}
