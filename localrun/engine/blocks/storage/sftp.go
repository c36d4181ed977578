package storage

// Writing files to an SFTP server (file_upload's storage_type sftp): into
// a folder (made when missing), over SSH with a password or a private key
// (PEM or OpenSSH format, with its passphrase).
//
// The server's host key must be vouched for before any secret is sent: by
// the host key the block gives (the server's public key as known_hosts or
// ssh-keyscan write it, or its fingerprint as ssh-keygen -l prints it),
// else by the daemon's known_hosts file (S3Config.KnownHostsFile, by
// default ~/.ssh/known_hosts of the daemon's user). A server nothing
// vouches for is refused, its fingerprint in the error, never trusted
// blindly.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/abctl/abctl/internal/egress"
)

// sftpTimeout bounds reaching an SFTP server and signing in.
const sftpTimeout = 30 * time.Second

// SFTPTarget is where a file_upload block writes over SFTP, and how to
// sign in.
type SFTPTarget struct {
	Host       string
	Port       int
	User       string
	Password   string
	PrivateKey string
	Passphrase string
	Dir        string // "" is the login folder
	HostKey    string // "" leaves the known_hosts file to vouch for the server
	// KnownHosts is the known_hosts file; "" means ~/.ssh/known_hosts.
	KnownHosts string
	// Dial connects to the server (the run's egress guard, which decides
	// what the run may reach); nil dials without a policy.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (t SFTPTarget) addr() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// URI is the sftp:// URI of a path on the server, as written (not
// percent-encoded), like the s3:// ones.
func (t SFTPTarget) URI(p string) string {
	host := t.Host
	if t.Port != 22 {
		host = t.addr()
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return "sftp://" + host + p
}

// PutSFTP writes the local files paths into t's folder, under their names,
// and returns their URIs.
func PutSFTP(ctx context.Context, t SFTPTarget, paths []string) ([]any, error) {
	auth, err := t.auth()
	if err != nil {
		return nil, err
	}
	check, algos, err := hostKeyCheck(t.HostKey, t.KnownHosts)
	if err != nil {
		return nil, err
	}
	// refused keeps why the host key was refused: the handshake's error
	// wraps it in its own words.
	var refused error
	cfg := &ssh.ClientConfig{
		User: t.User, Auth: auth, HostKeyAlgorithms: algos, Timeout: sftpTimeout,
		HostKeyCallback: func(host string, remote net.Addr, key ssh.PublicKey) error {
			if err := check(host, remote, key); err != nil {
				refused = err
				return err
			}
			return nil
		},
	}
	addr := t.addr()
	d := net.Dialer{Timeout: sftpTimeout}
	dial := d.DialContext
	if t.Dial != nil {
		dial = t.Dial
	}
	dctx, cancel := context.WithTimeout(ctx, sftpTimeout)
	conn, err := dial(dctx, "tcp", addr)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if egress.IsRefused(err) {
			return nil, fmt.Errorf("the SFTP server %s: %v", addr, err)
		}
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, fmt.Errorf("the SFTP server %s cannot be reached: %v", addr, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetDeadline(time.Now().Add(sftpTimeout))
	sshConn, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case refused != nil:
			return nil, refused
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("the SFTP server %s refused the sign-in of %q: wrong password or key", addr, t.User)
		}
		return nil, fmt.Errorf("the SFTP server %s: %v", addr, err)
	}
	sshClient := ssh.NewClient(sshConn, chans, reqs)
	defer sshClient.Close()
	c, err := sftp.NewClient(sshClient)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the server %s does not serve SFTP to %q: %v", addr, t.User, err)
	}
	defer c.Close()
	// Signed in: the transfers may take their time.
	conn.SetDeadline(time.Time{})
	dir := t.Dir
	if dir == "" {
		dir = "."
	} else if err := c.MkdirAll(dir); err != nil {
		return nil, sftpErr(ctx, fmt.Sprintf("making the folder %q on the SFTP server %s", dir, addr), err)
	}
	abs, err := c.RealPath(dir)
	if err != nil {
		return nil, sftpErr(ctx, fmt.Sprintf("finding the folder %q on the SFTP server %s", dir, addr), err)
	}
	uris := []any{}
	for _, p := range paths {
		remote := path.Join(abs, filepath.Base(p))
		if err := sftpCopy(c, p, remote); err != nil {
			return nil, sftpErr(ctx, fmt.Sprintf("writing %s on the SFTP server %s", remote, addr), err)
		}
		uris = append(uris, t.URI(remote))
	}
	return uris, nil
}

func sftpErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s: %v", what, err)
}

// sftpCopy writes the local file src as remote.
func sftpCopy(c *sftp.Client, src, remote string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	dst, err := c.Create(remote)
	if err != nil {
		return err
	}
	_, err = dst.ReadFrom(f)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// auth returns how t signs in: its private key, then its password.
func (t SFTPTarget) auth() ([]ssh.AuthMethod, error) {
	var methods []ssh.AuthMethod
	if k := strings.TrimSpace(t.PrivateKey); k != "" {
		signer, err := ssh.ParsePrivateKey([]byte(k))
		var missing *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &missing) && t.Passphrase == "":
			return nil, errors.New("sftp_private_key is protected by a passphrase: give sftp_private_key_passphrase")
		case errors.As(err, &missing):
			if signer, err = ssh.ParsePrivateKeyWithPassphrase([]byte(k), []byte(t.Passphrase)); err != nil {
				return nil, errors.New("sftp_private_key cannot be opened with sftp_private_key_passphrase")
			}
		case err != nil:
			// The parser's words could quote the key: not repeated.
			return nil, errors.New("sftp_private_key is not a private key in PEM or OpenSSH format")
		}
		methods = append(methods, ssh.PublicKeys(signer))
	}
	if t.Password != "" {
		pw := t.Password
		methods = append(methods, ssh.Password(pw),
			ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = pw
				}
				return answers, nil
			}))
	}
	return methods, nil
}

// hostKey is a host key a block vouches for: the key, or only its
// fingerprint.
type hostKey struct {
	key         ssh.PublicKey
	fingerprint string // SHA256:… or the legacy MD5 aa:bb:… form
}

// CheckHostKey says why sftp_host_key cannot vouch for a server; nil
// when it can.
func CheckHostKey(s string) error {
	_, err := parseHostKey(s)
	return err
}

// parseHostKey reads sftp_host_key: a public key as an authorized_keys or
// known_hosts line writes it, its base64 blob alone, or its fingerprint.
func parseHostKey(s string) (hostKey, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "SHA256:") {
		return hostKey{fingerprint: strings.TrimRight(s, "=")}, nil
	}
	if md5 := strings.TrimPrefix(s, "MD5:"); len(md5) == 47 && strings.Count(md5, ":") == 15 {
		return hostKey{fingerprint: strings.ToLower(md5)}, nil
	}
	if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s)); err == nil {
		return hostKey{key: k}, nil
	}
	if _, _, k, _, _, err := ssh.ParseKnownHosts([]byte(s)); err == nil {
		return hostKey{key: k}, nil
	}
	if blob, err := base64.StdEncoding.DecodeString(s); err == nil {
		if k, err := ssh.ParsePublicKey(blob); err == nil {
			return hostKey{key: k}, nil
		}
	}
	return hostKey{}, errors.New(`it is neither a public key ("ssh-ed25519 AAAA…", as in known_hosts or ssh-keyscan's output) nor a fingerprint ("SHA256:…", as ssh-keygen -l prints)`)
}

func (h hostKey) matches(k ssh.PublicKey) bool {
	switch {
	case h.key != nil:
		return bytes.Equal(h.key.Marshal(), k.Marshal())
	case strings.HasPrefix(h.fingerprint, "SHA256:"):
		return h.fingerprint == ssh.FingerprintSHA256(k)
	}
	return h.fingerprint == ssh.FingerprintLegacyMD5(k)
}

// hostKeyCheck returns the check of an SFTP server's host key, and the
// host key algorithms to ask the server for (nil: the defaults): given
// (sftp_host_key) when there is one, else the known_hosts file (""
// means ~/.ssh/known_hosts).
func hostKeyCheck(given, knownHostsFile string) (ssh.HostKeyCallback, []string, error) {
	if given != "" {
		want, err := parseHostKey(given)
		if err != nil {
			return nil, nil, fmt.Errorf("sftp_host_key: %w", err)
		}
		var algos []string
		if want.key != nil {
			switch want.key.Type() {
			case ssh.KeyAlgoRSA:
				algos = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
			default:
				algos = []string{want.key.Type()}
			}
		}
		return func(host string, _ net.Addr, k ssh.PublicKey) error {
			if want.matches(k) {
				return nil
			}
			return fmt.Errorf("the SFTP server %s presented the host key %s %s, not the one sftp_host_key gives: the server changed its key, or someone stands between the daemon and it; nothing was sent", host, k.Type(), ssh.FingerprintSHA256(k))
		}, algos, nil
	}
	file := knownHostsFile
	if file == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, nil, errors.New("the block has no sftp_host_key, and the daemon's user has no home folder holding a known_hosts file")
		}
		file = filepath.Join(home, ".ssh", "known_hosts")
	}
	known, err := knownhosts.New(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("the known_hosts file %s cannot be read: %v", file, err)
	}
	return func(host string, remote net.Addr, k ssh.PublicKey) error {
		fp := k.Type() + " " + ssh.FingerprintSHA256(k)
		if known != nil {
			err := known(host, remote, k)
			if err == nil {
				return nil
			}
			var ke *knownhosts.KeyError
			var re *knownhosts.RevokedError
			switch {
			case errors.As(err, &re):
				return fmt.Errorf("the SFTP server %s presented the host key %s, which %s revokes; nothing was sent", host, fp, file)
			case errors.As(err, &ke) && len(ke.Want) > 0:
				return fmt.Errorf("the SFTP server %s presented the host key %s, not the one %s holds for it (line %d): the server changed its key, or someone stands between the daemon and it; nothing was sent", host, fp, file, ke.Want[0].Line)
			case !errors.As(err, &ke):
				return fmt.Errorf("the SFTP server %s: checking its host key against %s: %v", host, file, err)
			}
		}
		return fmt.Errorf("nothing vouches for the host key of the SFTP server %s (%s): give the block sftp_host_key (the server's public key, or this fingerprint once its administrator confirms it), or add the server to %s; nothing was sent", host, fp, file)
	}, nil, nil
}
