package blocks

// file_upload to an SFTP server (storage_type sftp): the run's downloaded
// files are written into sftp_remote_path (else the block's path, else
// the account's login folder) by package blocks/storage, which refuses a
// server whose host key nothing vouches for.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/blocks/storage"
)

func (in storageBlocks) sftpUpload(ctx context.Context, b *client.FileUploadBlock, sc *scope, folder string, names []string) (any, error) {
	t := storage.SFTPTarget{Port: 22, KnownHosts: in.s3.KnownHostsFile}
	if in.guard != nil {
		// The run's server: its organization's guard decides.
		t.Dial = in.guard.DialContext
	}
	if b.SFTPPort != nil {
		t.Port = *b.SFTPPort
	}
	for _, f := range []struct {
		raw string
		dst *string
	}{{b.SFTPHost, &t.Host}, {b.SFTPUsername, &t.User}, {b.SFTPRemotePath, &t.Dir}, {b.SFTPHostKey, &t.HostKey}} {
		v, err := sc.render(f.raw)
		if err != nil {
			return nil, err
		}
		*f.dst = strings.TrimSpace(v)
	}
	if t.Dir == "" {
		t.Dir = strings.TrimSpace(folder)
	}
	for _, f := range []struct {
		name, raw string
		dst       *string
	}{{"sftp_password", b.SFTPPassword, &t.Password}, {"sftp_private_key", b.SFTPPrivateKey, &t.PrivateKey}, {"sftp_private_key_passphrase", b.SFTPPrivateKeyPassphrase, &t.Passphrase}} {
		v, err := in.secretField(ctx, sc, f.name, f.raw)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	switch {
	case t.Host == "":
		return nil, errors.New("sftp_host rendered empty")
	case t.User == "":
		return nil, errors.New("sftp_username rendered empty")
	case t.Password == "" && strings.TrimSpace(t.PrivateKey) == "":
		return nil, errors.New("sftp_password and sftp_private_key rendered empty")
	}
	paths := make([]string, len(names))
	for i, name := range names {
		p, ok := in.files.Path(name)
		if !ok {
			return nil, fmt.Errorf("the run's file %q is gone", name)
		}
		paths[i] = p
	}
	uris, err := in.upload(b.Label, t.URI("/"+strings.TrimPrefix(t.Dir, "/")), names, func() ([]any, error) {
		uris, err := storage.PutSFTP(ctx, t, paths)
		if err != nil {
			return nil, errors.New(storage.Redact(err.Error(), t.Password, t.Passphrase))
		}
		return uris, nil
	})
	if err != nil {
		return nil, err
	}
	return uris, nil
}
