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
	"mime"
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// S3Config is the daemon's storage configuration: the S3-compatible
// service and bucket of upload_to_s3 and download_to_s3 blocks, the
// defaults of file_upload blocks that name no bucket or keys, and what
// vouches for SFTP servers.
type S3Config struct {
	// Endpoint is the URL of the S3-compatible service, such as
	// "http://127.0.0.1:9000" for a local MinIO; empty means AWS S3.
	// Every S3 request goes there, file_upload blocks' included (they
	// have no endpoint field).
	Endpoint string
	// Region is the buckets' region; empty lets the client ask AWS for a
	// bucket's region (other services take us-east-1).
	Region string
	// AccessKeyID, SecretAccessKey and SessionToken (optional) sign the
	// requests. They are secrets: give them through the environment
	// (S3ConfigFromEnv), never on a command line.
	AccessKeyID, SecretAccessKey, SessionToken string
	// PathStyle addresses a bucket as <endpoint>/<bucket> rather than
	// <bucket>.<endpoint>; MinIO, Ceph and most self-hosted services
	// need it.
	PathStyle bool
	// Bucket receives the files of upload_to_s3 and download_to_s3, and of
	// file_upload blocks without s3_bucket.
	Bucket string
	// Prefix starts the keys upload_to_s3 and download_to_s3 write
	// ("abctl/" puts them under abctl/).
	Prefix string
	// KnownHostsFile is the OpenSSH known_hosts file that vouches for the
	// SFTP servers of file_upload blocks without sftp_host_key; empty
	// means ~/.ssh/known_hosts of the user the daemon runs as.
	KnownHostsFile string
}

// The environment variables S3ConfigFromEnv reads: the names the AWS
// tools use.
const (
	EnvS3Endpoint      = "AWS_ENDPOINT_URL_S3"
	EnvEndpoint        = "AWS_ENDPOINT_URL"
	EnvRegion          = "AWS_REGION"
	EnvDefaultRegion   = "AWS_DEFAULT_REGION"
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken    = "AWS_SESSION_TOKEN"
)

// defaultS3Description names the service of a configuration without an
// endpoint in messages.
const defaultS3Description = "AWS S3"

// S3ConfigFromEnv returns the S3 service, region and keys the
// environment gives (getenv is os.Getenv): AWS_ENDPOINT_URL_S3 (else
// AWS_ENDPOINT_URL), AWS_REGION (else AWS_DEFAULT_REGION),
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. The
// bucket, prefix and path style are left to the caller.
func S3ConfigFromEnv(getenv func(string) string) S3Config {
	first := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return v
			}
		}
		return ""
	}
	return S3Config{
		Endpoint:        first(EnvS3Endpoint, EnvEndpoint),
		Region:          first(EnvRegion, EnvDefaultRegion),
		AccessKeyID:     first(EnvAccessKeyID),
		SecretAccessKey: first(EnvSecretAccessKey),
		SessionToken:    first(EnvSessionToken),
	}
}

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
				if _, err := parseHostKey(k); err != nil {
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
	folder := joinKey(in.env.S3.Prefix, uuid.NewString())
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
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "download_to_s3", Text: steplog.ShownURL(u)})
	if err != nil {
		return nil, err
	}
	var uri string
	p, err := in.files.FetchUpload(ctx, u)
	var fe *runbrowser.FetchError
	if errors.As(err, &fe) {
		err = fmt.Errorf("url %q: %s", steplog.ShownURL(u), strings.Replace(fe.Msg, "The file_url ", "it ", 1))
	}
	if err == nil {
		key := joinKey(in.env.S3.Prefix, uuid.NewString(), filepath.Base(p))
		err = store.put(ctx, key, p)
		uri = store.uri(key)
	}
	result := ""
	if err == nil {
		result = "stored " + uri
	}
	in.steps.End(rec, "", result, err)
	if err != nil {
		return nil, err
	}
	return uri, nil
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
	if folder = joinKey(folder); folder == "" {
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
func (in storageBlocks) storeFiles(ctx context.Context, label string, store *s3Store, folder string, names []string) ([]any, error) {
	rec, err := in.steps.Start(label, steplog.Action{Type: "upload", Text: fmt.Sprintf("%s to %s", countFiles(len(names)), store.uri(folder+"/"))})
	if err != nil {
		return nil, err
	}
	uris := []any{}
	for _, name := range names {
		p, ok := in.files.Path(name)
		if !ok {
			err = fmt.Errorf("the run's file %q is gone", name)
			break
		}
		key := joinKey(folder, name)
		if err = store.put(ctx, key, p); err != nil {
			break
		}
		uris = append(uris, store.uri(key))
	}
	result := ""
	if err == nil {
		result = "uploaded " + listOrNone(names)
	}
	in.steps.End(rec, "", result, err)
	if err != nil {
		return nil, err
	}
	return uris, nil
}

func countFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// joinKey joins the parts of an object key with one slash between them,
// leaving out empty parts.
func joinKey(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.Trim(strings.ReplaceAll(strings.TrimSpace(p), "\\", "/"), "/"); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// s3Store is a bucket of an S3-compatible service.
type s3Store struct {
	client *minio.Client
	// where names the service in messages: its endpoint, or AWS S3.
	where  string
	bucket string
	// secrets are values kept out of messages.
	secrets []string
}

// daemonStore is the daemon's bucket, where upload_to_s3 and
// download_to_s3 write.
func (in storageBlocks) daemonStore() (*s3Store, error) {
	cfg := in.env.S3
	if strings.TrimSpace(cfg.Bucket) == "" {
		return nil, errors.New("this daemon has no S3 bucket for it: start the daemon with --s3-bucket (and its S3 service's endpoint and keys)")
	}
	return newS3Store(cfg, cfg.Bucket, "start the daemon with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in its environment")
}

// blockStore is the bucket of a file_upload block: its bucket, keys and
// region, else the daemon's.
func (in storageBlocks) blockStore(ctx context.Context, b *client.FileUploadBlock, sc *scope) (*s3Store, error) {
	cfg := in.env.S3
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
	return newS3Store(cfg, bucket, "give the block aws_access_key_id and aws_secret_access_key, or start the daemon with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in its environment")
}

// newS3Store returns the bucket of cfg's service; noKeys says how to give
// keys when cfg has none.
//
// The service is always the operator's (Env.S3: the daemon's flags and
// environment; no block names an endpoint), so it is trusted and not
// reached through the run's egress guard: a shared daemon's guard would
// refuse the loopback or private MinIO an operator typically gives. What a
// run names (the sources of download_to_s3, SFTP servers) goes through
// the guard.
func newS3Store(cfg S3Config, bucket, noKeys string) (*s3Store, error) {
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return nil, errors.New("no S3 access key: " + noKeys)
	}
	host, secure, where := "s3.amazonaws.com", true, defaultS3Description
	if e := strings.TrimSpace(cfg.Endpoint); e != "" {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("the daemon's S3 endpoint %q is not an http(s) URL with a host and no path", e)
		}
		host, secure, where = u.Host, u.Scheme == "https", u.Scheme+"://"+u.Host
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
		Secure:       secure,
		Region:       strings.TrimSpace(cfg.Region),
		BucketLookup: lookup,
		// A few tries: an unreachable service fails the block in a
		// second, not after the client's ten.
		MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("the S3 service %s: %v", where, err)
	}
	return &s3Store{client: c, where: where, bucket: bucket, secrets: []string{cfg.SecretAccessKey, cfg.SessionToken}}, nil
}

// uri is the s3:// URI of an object key, as written (not
// percent-encoded), as the AWS tools write them.
func (s *s3Store) uri(key string) string { return "s3://" + s.bucket + "/" + key }

// put uploads the file at path as key.
func (s *s3Store) put(ctx context.Context, key, path string) error {
	ct := mime.TypeByExtension(filepath.Ext(path))
	if ct == "" {
		ct = "application/octet-stream"
	}
	_, err := s.client.FPutObject(ctx, s.bucket, key, path, minio.PutObjectOptions{ContentType: ct})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	what := fmt.Sprintf("storing %s", s.uri(key))
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "":
		cause := runbrowser.NetErr(err)
		var op *net.OpError
		if errors.As(cause, &op) {
			cause = op.Err
		}
		return fmt.Errorf("%s: the S3 service %s cannot be reached: %s", what, s.where, redact(cause.Error(), s.secrets...))
	case "NoSuchBucket":
		return fmt.Errorf("%s: the bucket %q does not exist at %s", what, s.bucket, s.where)
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AccessDenied", "AuthorizationHeaderMalformed":
		return fmt.Errorf("%s: the S3 service %s refused the access key (%s: %s)", what, s.where, resp.Code, redact(resp.Message, s.secrets...))
	}
	return fmt.Errorf("%s: the S3 service %s answered %s: %s", what, s.where, resp.Code, redact(resp.Message, s.secrets...))
}

// redact replaces the secrets in text.
func redact(text string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}

// secretField is the value of a block's field that may hold a secret: the
// value of the parameter the field names (a credential parameter's secret
// value or password), or else the field as a template; credentials'
// placeholders are revealed. field names the field in errors.
func (in storageBlocks) secretField(ctx context.Context, sc *scope, field, raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", nil
	}
	v, named, err := paramText(sc, strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	if !named {
		if v, err = sc.render(raw); err != nil {
			return "", err
		}
	}
	real, _, err := in.sess.Secrets().Reveal(ctx, v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return real, nil
}

// paramText is the text of the run's parameter key: a text, or a
// credential's secret value or password. named is false when no parameter
// has that key.
func paramText(sc *scope, key string) (text string, named bool, err error) {
	v, ok := sc.in.params[key]
	if !ok {
		return "", false, nil
	}
	switch x := v.(type) {
	case string:
		return x, true, nil
	case map[string]any:
		for _, f := range []string{"secret_value", "password"} {
			if s, ok := x[f].(string); ok {
				return s, true, nil
			}
		}
	}
	return "", true, fmt.Errorf("the parameter %q holds %T, not a text", key, v)
}
