package ocicmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/oci"
)

// loginResult is login's --json document.
type loginResult struct {
	Registry string `json:"registry"`
	Username string `json:"username"`
}

// loginOptions are the flags of plugkit login.
type loginOptions struct {
	oci           remote.OCIFlags
	username      string
	passwordStdin bool
}

// NewCmdLogin builds plugkit login, which runs with fac.
func NewCmdLogin(fac *factory.Factory) *cobra.Command {
	opts := &loginOptions{}
	cmd := &cobra.Command{
		Use:   "login REGISTRY",
		Short: "Check credentials against an OCI registry and store them",
		Long: `Login checks a username and password (or token) against REGISTRY
(host[:port]) and, only when the registry accepts them, stores them in the
Docker config ($DOCKER_CONFIG/config.json, else ~/.docker/config.json) or its
configured credential helper, where docker, oras and helm find them too. A
wrong password exits 1 and stores nothing.

The password never comes from the command line: give it on standard input
with --password-stdin, or type it at the prompt (not echoed) on a terminal.

Exit status: 0 stored, 1 refused by the registry, 2 usage, network or I/O
error.`,
		Example: `  plugkit login ghcr.io --username alice            # prompts for the password
  echo "$TOKEN" | plugkit login ghcr.io --username alice --password-stdin
  plugkit login 127.0.0.1:5000 --plain-http --username ci --password-stdin < token.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host := args[0]
			cred, err := readCredential(fac, cmd, opts.username, opts.passwordStdin)
			if err != nil {
				return err
			}
			remoteOpts, err := opts.oci.Remote()
			if err != nil {
				return err
			}
			if err := oci.Login(cmd.Context(), remoteOpts.Credentials, host, cred, remoteOpts); err != nil {
				return command.WithCode(command.CodeRegistry, command.Failed(err))
			}
			res := loginResult{Registry: host, Username: cred.Username}
			return command.Output(cmd, opts.oci.JSON, res, func(w io.Writer) {
				fmt.Fprintf(w, "logged in to %s as %s\n", terminal.Safe(host), terminal.Safe(cred.Username))
			})
		},
	}
	opts.oci.Register(fac, cmd)
	cmd.Flags().StringVarP(&opts.username, "username", "u", "", "user name (prompted for on a terminal when missing)")
	cmd.Flags().BoolVar(&opts.passwordStdin, "password-stdin", false, "read the password or token from standard input")
	return cmd
}

// readCredential gets the user name and password: the password from
// standard input (--password-stdin) or a prompt without echo, never from
// argv. Only a terminal that is a file (the process's own) prompts.
func readCredential(fac *factory.Factory, cmd *cobra.Command, username string, fromStdin bool) (auth.Credential, error) {
	in := cmd.InOrStdin()
	file, isFile := in.(*os.File)
	tty := fac.InTerminal && isFile
	if username == "" {
		if !tty || fromStdin {
			return auth.Credential{}, command.Usagef("--username is required (standard input is not a terminal to ask on)")
		}
		fmt.Fprint(cmd.ErrOrStderr(), "Username: ")
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil {
			return auth.Credential{}, command.Usage(err)
		}
		username = strings.TrimSpace(line)
	}
	var password string
	switch {
	case fromStdin:
		b, err := io.ReadAll(io.LimitReader(in, remote.MaxTokenFile))
		if err != nil {
			return auth.Credential{}, command.Usage(err)
		}
		password = strings.TrimRight(string(b), "\r\n")
	case tty:
		fmt.Fprint(cmd.ErrOrStderr(), "Password: ")
		b, err := term.ReadPassword(int(file.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return auth.Credential{}, command.Usage(err)
		}
		password = string(b)
	default:
		return auth.Credential{}, command.Usagef("no password: use --password-stdin (passwords are never taken from the command line)")
	}
	if password == "" {
		return auth.Credential{}, command.Usage(errors.New("empty password"))
	}
	return auth.Credential{Username: username, Password: password}, nil
}
