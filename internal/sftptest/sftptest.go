// Package sftptest serves SFTP on loopback for tests and for trying abctl
// by hand: an SSH server with one account whose files live in memory
// (nothing reaches the disk, whatever path a client names). It contacts
// nothing and listens on loopback addresses only.
package sftptest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Server is an SSH server on loopback that serves the SFTP subsystem to
// one user, who signs in with a password or an authorized public key.
type Server struct {
	user, password string
	clientKey      ssh.PublicKey
	seed           []byte
	onWrite        func(path string)

	ln      net.Listener
	cfg     *ssh.ServerConfig
	hostKey ssh.PublicKey
	fs      sftp.Handlers
	wg      sync.WaitGroup

	mu      sync.Mutex
	signIns int
}

// Option configures a Server.
type Option func(*Server)

// WithClientKey lets the user sign in with the private key of pub too.
func WithClientKey(pub ssh.PublicKey) Option { return func(s *Server) { s.clientKey = pub } }

// WithHostKeySeed derives the server's ed25519 host key from a 32-byte
// seed, so that its fingerprint is the same at every start; without it the
// key is new each time.
func WithHostKeySeed(seed []byte) Option { return func(s *Server) { s.seed = seed } }

// OnWrite calls fn with the path of each file a client opens for writing.
func OnWrite(fn func(path string)) Option { return func(s *Server) { s.onWrite = fn } }

// Start listens on addr (a loopback address; port 0 picks a free one) and
// serves until Close.
func Start(addr, user, password string, opts ...Option) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("sftp address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("sftp address %q: only loopback addresses are served", addr)
	}
	s := &Server{user: user, password: password, fs: sftp.InMemHandler()}
	for _, o := range opts {
		o(s)
	}
	var priv ed25519.PrivateKey
	switch len(s.seed) {
	case 0:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
	case ed25519.SeedSize:
		priv = ed25519.NewKeyFromSeed(s.seed)
	default:
		return nil, fmt.Errorf("host key seed: %d bytes, want %d", len(s.seed), ed25519.SeedSize)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	s.hostKey = signer.PublicKey()
	s.cfg = &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			s.countSignIn()
			if c.User() == s.user && string(pw) == s.password {
				return nil, nil
			}
			return nil, errors.New("wrong user or password")
		},
		PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			s.countSignIn()
			if c.User() == s.user && s.clientKey != nil && bytes.Equal(k.Marshal(), s.clientKey.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	s.cfg.AddHostKey(signer)
	if s.ln, err = net.Listen("tcp", addr); err != nil {
		return nil, err
	}
	s.wg.Go(func() {
		for {
			nc, err := s.ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() { s.serve(nc) })
		}
	})
	return s, nil
}

func (s *Server) countSignIn() {
	s.mu.Lock()
	s.signIns++
	s.mu.Unlock()
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// HostPort is Addr split, the port as a number.
func (s *Server) HostPort() (string, int) {
	host, port, _ := net.SplitHostPort(s.Addr())
	n, _ := strconv.Atoi(port)
	return host, n
}

// HostKey is the server's public host key.
func (s *Server) HostKey() ssh.PublicKey { return s.hostKey }

// Fingerprint is the host key's SHA256 fingerprint, as ssh-keygen -l
// prints it.
func (s *Server) Fingerprint() string { return ssh.FingerprintSHA256(s.hostKey) }

// SignIns counts the sign-in attempts so far (passwords and keys).
func (s *Server) SignIns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signIns
}

// ReadFile returns the content of the file at path, as a client would
// read it.
func (s *Server) ReadFile(path string) ([]byte, error) {
	l, err := s.fs.FileList.Filelist(sftp.NewRequest("Stat", path))
	if err != nil {
		return nil, err
	}
	infos := make([]os.FileInfo, 1)
	if n, err := l.ListAt(infos, 0); n != 1 {
		return nil, fmt.Errorf("stat %s: %v", path, err)
	}
	get := sftp.NewRequest("Get", path)
	get.Flags = 1 // SSH_FXF_READ: the file is opened for reading
	r, err := s.fs.FileGet.Fileread(get)
	if err != nil {
		return nil, err
	}
	b := make([]byte, infos[0].Size())
	if n, err := r.ReadAt(b, 0); n < len(b) {
		return nil, fmt.Errorf("read %s: %v", path, err)
	}
	return b, nil
}

// Close stops the server and waits for its connections to end.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *Server) serve(nc net.Conn) {
	defer nc.Close()
	conn, chans, reqs, err := ssh.NewServerConn(nc, s.cfg)
	if err != nil {
		return
	}
	defer conn.Close()
	go ssh.DiscardRequests(reqs)
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "only sessions are served")
			continue
		}
		ch, chReqs, err := nch.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range chReqs {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				req.Reply(ok, nil)
				if !ok {
					continue
				}
				h := s.fs
				if s.onWrite != nil {
					h.FilePut = notifyingWriter{h.FilePut, s.onWrite}
				}
				srv := sftp.NewRequestServer(ch, h)
				srv.Serve()
				srv.Close()
				return
			}
		}()
	}
}

type notifyingWriter struct {
	sftp.FileWriter
	fn func(string)
}

func (w notifyingWriter) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	wa, err := w.FileWriter.Filewrite(r)
	if err == nil {
		w.fn(r.Filepath)
	}
	return wa, err
}
