package blocks

// The storage blocks: upload_to_s3, download_to_s3 and file_upload.
//
// upload_to_s3 and download_to_s3 write into the hosted service's own
// storage; here, into the daemon's bucket (S3Config.Bucket) of its
// S3-compatible service. upload_to_s3 uploads the files the run downloaded
// (or the one its path names), download_to_s3 the file at its url. Each
// upload goes under a folder of its own, <prefix><uuid>/<file name>.
//
// file_upload sends the run's downloaded files to the user's storage: an
// S3 bucket (storage_type s3, the default) or an SFTP server (sftp, see
// storage_sftp.go). Its bucket, keys and region are the block's, else the
// daemon's; its files go under its path, else a folder of their own.
// Azure Blob Storage and Google Drive are refused before the run starts.
//
// A field that holds a secret (a key, a password) is a template or the key
// of a parameter; credentials' placeholders are revealed only to be sent
// to the service, and the values never reach an output, the step log or
// an error message.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/blocks/storage"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// S3Config is the daemon's storage configuration (see package
// blocks/storage).
type S3Config = storage.S3Config

// S3ConfigFromEnv returns the S3 service, region and keys the
// environment gives (getenv is os.Getenv), as storage.S3ConfigFromEnv
// reads them.
func S3ConfigFromEnv(getenv func(string) string) S3Config { return storage.S3ConfigFromEnv(getenv) }

// downloadDirectory is the name the hosted service gives the run's
// download folder in upload_to_s3's path.
const downloadDirectory = "SKYVERN_DOWNLOAD_DIRECTORY"

// checkStorage checks a storage block before the run starts: its required
// fields, and a storage type this daemon can write to.
func checkStorage(b client.Block) error {
	label, typ := b.Base().Label, b.BlockType()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("block %q (%s): %s", label, typ, fmt.Sprintf(format, args...))
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch x := b.(type) {
	case *client.UploadToS3Block:
		if p := strings.TrimSpace(x.Path); !strings.Contains(p, "{{") && (filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~")) {
			return fail("path %q is a path on the daemon's disk; this daemon uploads only the run's own files: leave path empty (or %s) for all of them, or give one file's name", x.Path, downloadDirectory)
		}
	case *client.DownloadToS3Block:
		if blank(x.URL) {
			return fail("it has no url")
		}
	case *client.FileUploadBlock:
		if !blank(x.Prompt) {
			return fail("prompt (choosing in words which files to upload) needs a language model, which this daemon's file_upload does not ask; leave prompt empty to upload every file the run downloaded")
		}
		switch st := strings.ToLower(strings.TrimSpace(x.StorageType)); st {
		case "", "s3":
		case "sftp":
			if blank(x.SFTPHost) {
				return fail("storage_type sftp needs sftp_host")
			}
			if blank(x.SFTPUsername) {
				return fail("storage_type sftp needs sftp_username")
			}
			if blank(x.SFTPPassword) && blank(x.SFTPPrivateKey) {
				return fail("storage_type sftp needs sftp_password or sftp_private_key")
			}
			if p := x.SFTPPort; p != nil && (*p < 1 || *p > 65535) {
				return fail("sftp_port %d is not a port (1 to 65535)", *p)
			}
			if k := strings.TrimSpace(x.SFTPHostKey); k != "" && !strings.Contains(k, "{{") {
				if err := storage.CheckHostKey(k); err != nil {
					return fail("sftp_host_key: %v", err)
				}
			}
		case "azure":
			return fail("storage_type azure is not supported by this daemon: writing to Azure Blob Storage needs Azure's client, which it does not include; use storage_type s3 (any S3-compatible service) or sftp")
		case "google_drive":
			return fail("storage_type google_drive is not supported by this daemon: writing to Google Drive needs a Google credential and Drive's client, which it does not have; use storage_type s3 (any S3-compatible service) or sftp")
		default:
			return fail("storage_type %q is not one of s3, sftp, azure, google_drive", x.StorageType)
		}
	}
	return nil
}

func (in storageBlocks) uploadToS3(ctx context.Context, b *client.UploadToS3Block, sc *scope) (any, error) {
	names, err := in.filesToUpload(b.Path, sc)
	if err != nil {
		return nil, err
	}
	store, err := in.daemonStore()
	if err != nil {
		return nil, err
	}
	folder := storage.JoinKey(in.s3.Prefix, uuid.NewString())
	uris, err := in.storeFiles(ctx, b.Label, store, folder, names)
	if err != nil {
		return nil, err
	}
	return uris, nil
}

func (in storageBlocks) downloadToS3(ctx context.Context, b *client.DownloadToS3Block, sc *scope) (any, error) {
	u, err := sc.renderURL(b.URL)
	if err != nil {
		return nil, err
	}
	u = strings.TrimSpace(u)
	store, err := in.daemonStore()
	if err != nil {
		return nil, err
	}
	out, err := in.step(b.Label, steplog.Action{Type: "download_to_s3", Text: steplog.ShownURL(u)}, func() (any, string, error) {
		p, err := in.files.FetchUpload(ctx, u)
		var fe *runbrowser.FetchError
		if errors.As(err, &fe) {
			return nil, "", fmt.Errorf("url %q: %s", steplog.ShownURL(u), strings.Replace(fe.Msg, "The file_url ", "it ", 1))
		}
		if err != nil {
			return nil, "", err
		}
		key := storage.JoinKey(in.s3.Prefix, uuid.NewString(), filepath.Base(p))
		if err := store.Put(ctx, key, p); err != nil {
			return nil, "", err
		}
		uri := store.URI(key)
		return uri, "stored " + uri, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (in storageBlocks) fileUpload(ctx context.Context, b *client.FileUploadBlock, sc *scope) (any, error) {
	st := strings.ToLower(strings.TrimSpace(b.StorageType))
	if err := checkStorage(b); err != nil {
		// Refused before the run; here only for a caller that did not check.
		return nil, err
	}
	names := in.files.Downloads()
	folder, err := sc.render(b.Path)
	if err != nil {
		return nil, err
	}
	if st == "sftp" {
		return in.sftpUpload(ctx, b, sc, folder, names)
	}
	store, err := in.blockStore(ctx, b, sc)
	if err != nil {
		return nil, err
	}
	if folder = storage.JoinKey(folder); folder == "" {
		folder = uuid.NewString()
	}
	uris, err := in.storeFiles(ctx, b.Label, store, folder, names)
	if err != nil {
		return nil, err
	}
	return uris, nil
}

// filesToUpload names the run's files upload_to_s3's path means: all the
// files the run downloaded when it is empty or the hosted service's
// download folder, else the one file it names.
func (in storageBlocks) filesToUpload(rawPath string, sc *scope) ([]string, error) {
	p := strings.TrimSpace(rawPath)
	if inner, ok := strings.CutPrefix(p, "{{"); ok {
		if inner, ok := strings.CutSuffix(inner, "}}"); ok && strings.TrimSpace(inner) == downloadDirectory {
			p = downloadDirectory
		}
	}
	if p == "" || p == downloadDirectory {
		return in.files.Downloads(), nil
	}
	name, err := sc.render(p)
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" || name == downloadDirectory {
		return in.files.Downloads(), nil
	}
	if _, ok := in.files.Path(name); !ok {
		return nil, fmt.Errorf("path %q is not a file this run downloaded (its files: %s); leave path empty to upload all of them", name, listOrNone(in.files.Downloads()))
	}
	return []string{name}, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// storeFiles uploads the run's files names under folder of store, as one
// step of the block label, and returns their URIs.
func (in storageBlocks) storeFiles(ctx context.Context, label string, store *storage.Bucket, folder string, names []string) ([]any, error) {
	return in.upload(label, store.URI(folder+"/"), names, func() ([]any, error) {
		uris := []any{}
		for _, name := range names {
			p, ok := in.files.Path(name)
			if !ok {
				return nil, fmt.Errorf("the run's file %q is gone", name)
			}
			key := storage.JoinKey(folder, name)
			if err := store.Put(ctx, key, p); err != nil {
				return nil, err
			}
			uris = append(uris, store.URI(key))
		}
		return uris, nil
	})
}

// upload runs put, which writes the run's files names to where to says,
// as the upload step of the block label, and returns the files' URIs.
func (in storageBlocks) upload(label, to string, names []string, put func() ([]any, error)) ([]any, error) {
	out, err := in.step(label, steplog.Action{Type: "upload", Text: fmt.Sprintf("%s to %s", countFiles(len(names)), to)}, func() (any, string, error) {
		uris, err := put()
		if err != nil {
			return nil, "", err
		}
		return uris, "uploaded " + listOrNone(names), nil
	})
	uris, _ := out.([]any)
	return uris, err
}

func countFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// daemonStore is the daemon's bucket, where upload_to_s3 and
// download_to_s3 write.
func (in storageBlocks) daemonStore() (*storage.Bucket, error) {
	cfg := in.s3
	if strings.TrimSpace(cfg.Bucket) == "" {
		return nil, errors.New("this daemon has no S3 bucket for it: start the daemon with --s3-bucket (and its S3 service's endpoint and keys)")
	}
	return storage.OpenBucket(cfg, cfg.Bucket, "start the daemon with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in its environment")
}

// blockStore is the bucket of a file_upload block: its bucket, keys and
// region, else the daemon's.
func (in storageBlocks) blockStore(ctx context.Context, b *client.FileUploadBlock, sc *scope) (*storage.Bucket, error) {
	cfg := in.s3
	id, err := in.secretField(ctx, sc, "aws_access_key_id", b.AWSAccessKeyID)
	if err != nil {
		return nil, err
	}
	key, err := in.secretField(ctx, sc, "aws_secret_access_key", b.AWSSecretAccessKey)
	if err != nil {
		return nil, err
	}
	id, key = strings.TrimSpace(id), strings.TrimSpace(key)
	switch {
	case id != "" && key != "":
		cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken = id, key, ""
	case id != "" || key != "":
		return nil, errors.New("give both aws_access_key_id and aws_secret_access_key, or neither to use the daemon's keys")
	}
	region, err := sc.render(b.RegionName)
	if err != nil {
		return nil, err
	}
	if region = strings.TrimSpace(region); region != "" {
		cfg.Region = region
	}
	bucket, err := sc.render(b.S3Bucket)
	if err != nil {
		return nil, err
	}
	if bucket = strings.TrimSpace(bucket); bucket == "" {
		if bucket = strings.TrimSpace(cfg.Bucket); bucket == "" {
			return nil, errors.New("no bucket: give the block s3_bucket, or start the daemon with --s3-bucket")
		}
	}
	return storage.OpenBucket(cfg, bucket, "give the block aws_access_key_id and aws_secret_access_key, or start the daemon with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in its environment")
}
