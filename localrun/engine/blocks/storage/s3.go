// Package storage writes the files of the storage blocks to where the
// user keeps them: objects in a bucket of an S3-compatible service, and
// files on an SFTP server whose host key something vouches for before any
// secret is sent. It takes plain values (a configuration, rendered
// fields, local paths, how to dial) and returns the written files' URIs;
// its errors never hold the secrets they were given.
package storage

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/abctl/abctl/internal/s3err"
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

// JoinKey joins the parts of an object key with one slash between them,
// leaving out empty parts.
func JoinKey(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.Trim(strings.ReplaceAll(strings.TrimSpace(p), "\\", "/"), "/"); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// Bucket is a bucket of an S3-compatible service.
type Bucket struct {
	client *minio.Client
	// where names the service in messages: its endpoint, or AWS S3.
	where  string
	bucket string
	// secrets are values kept out of messages.
	secrets []string
}

// OpenBucket returns the bucket of cfg's service; noKeys says how to give
// keys when cfg has none.
//
// The service is always the operator's (the daemon's flags and
// environment; no block names an endpoint), so it is trusted and not
// reached through the run's egress guard: a shared daemon's guard would
// refuse the loopback or private MinIO an operator typically gives. What a
// run names (the sources of download_to_s3, SFTP servers) goes through
// the guard.
func OpenBucket(cfg S3Config, bucket, noKeys string) (*Bucket, error) {
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
	return &Bucket{client: c, where: where, bucket: bucket, secrets: []string{cfg.SecretAccessKey, cfg.SessionToken}}, nil
}

// URI is the s3:// URI of an object key, as written (not
// percent-encoded), as the AWS tools write them.
func (s *Bucket) URI(key string) string { return "s3://" + s.bucket + "/" + key }

// Put uploads the file at path as key.
func (s *Bucket) Put(ctx context.Context, key, path string) error {
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
	what := fmt.Sprintf("storing %s", s.URI(key))
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "":
		return fmt.Errorf("%s: the S3 service %s cannot be reached: %s", what, s.where, Redact(netCause(err).Error(), s.secrets...))
	case "NoSuchBucket":
		return fmt.Errorf("%s: the bucket %q does not exist at %s", what, s.bucket, s.where)
	}
	if s3err.RefusedKey(resp.Code) {
		return fmt.Errorf("%s: the S3 service %s refused the access key (%s: %s)", what, s.where, resp.Code, Redact(resp.Message, s.secrets...))
	}
	return fmt.Errorf("%s: the S3 service %s answered %s: %s", what, s.where, resp.Code, Redact(resp.Message, s.secrets...))
}

// Redact replaces the secrets in text.
func Redact(text string, secrets ...string) string { return s3err.Redact(text, secrets...) }

// netCause is why a connection failed, without the request and operation
// that wrap it.
func netCause(err error) error { return s3err.NetCause(err) }
