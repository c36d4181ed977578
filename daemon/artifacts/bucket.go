package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/abctl/abctl/internal/s3err"
)

// BucketScheme starts the value of --artifacts that names a bucket of an
// S3-compatible service instead of a directory: s3://bucket[/prefix].
const BucketScheme = "s3://"

// BucketConfig says where a Store keeps the copies of its files that
// other daemons serve: a bucket of an S3-compatible service.
type BucketConfig struct {
	// Endpoint is the URL of the S3-compatible service, such as
	// http://127.0.0.1:9000 for a local MinIO; empty means AWS S3.
	Endpoint string
	// Region is the bucket's region; empty lets the client ask AWS (other
	// services take us-east-1).
	Region string
	// AccessKeyID, SecretAccessKey and SessionToken (optional) sign the
	// requests. They are secrets: no message of the package holds them.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Bucket and Prefix place the files: <prefix>/<org id>/<run
	// id>/<name> (no prefix: <org id>/<run id>/<name>).
	Bucket, Prefix string
	// Timeout bounds one upload or one removal of a run's objects; 0 means
	// DefaultBucketTimeout.
	Timeout time.Duration
}

// DefaultBucketTimeout bounds one upload (a recording may be large) or one
// removal of a run's objects.
const DefaultBucketTimeout = 10 * time.Minute

// metaModTime is the user metadata (x-amz-meta-mtime) that carries a
// file's modification time with its object, so that every daemon answers
// the same Last-Modified for it.
const metaModTime = "Mtime"

// HasScheme reports whether value is written as a URL (scheme://...)
// rather than a directory: s3://... names a bucket, any other scheme is
// a mistake to report.
func HasScheme(value string) bool {
	scheme, _, ok := strings.Cut(value, "://")
	if !ok || scheme == "" {
		return false
	}
	for i, c := range scheme {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// ParseBucketURL reads s3://bucket[/prefix] into the bucket's name and the
// prefix of the keys (no slash at either end; "" for none). Its errors
// say what is wrong without repeating a value that might hold a key (an
// s3:// URL carries none: the keys come from the environment).
func ParseBucketURL(value string) (bucket, prefix string, err error) {
	scheme, rest, ok := strings.Cut(value, "://")
	if !ok || !strings.EqualFold(scheme, "s3") {
		return "", "", errors.New("a bucket is written s3://bucket or s3://bucket/prefix")
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if strings.ContainsAny(bucket, "@:") {
		return "", "", errors.New("an s3:// URL carries no keys or port: give the keys in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and the service in AWS_ENDPOINT_URL_S3")
	}
	if bucket == "" {
		return "", "", fmt.Errorf("%q names no bucket: write s3://bucket or s3://bucket/prefix", value)
	}
	if err := s3utils.CheckValidBucketNameStrict(bucket); err != nil {
		return "", "", fmt.Errorf("%q: %q is not a valid bucket name (3 to 63 lowercase letters, digits, dots and hyphens)", value, bucket)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		for _, part := range strings.Split(prefix, "/") {
			if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "?#\\") || hasControl(part) {
				return "", "", fmt.Errorf("%q: the prefix %q must be plain path elements separated by single slashes (no ., .., ?, #, \\ or control characters)", value, prefix)
			}
		}
	}
	return bucket, prefix, nil
}

func hasControl(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// Bucket is the bucket a Store copies its files to and serves them from
// when they are not on its own disk. It is safe for concurrent use.
type Bucket struct {
	client  *minio.Client
	bucket  string
	prefix  string
	where   string // s3://bucket/prefix at the service, for messages
	secrets []string
	timeout time.Duration
}

// OpenBucket connects to cfg's bucket and checks, within ctx, that it is
// there and that the keys may see it. Its errors name the bucket and the
// service, never the keys.
func OpenBucket(ctx context.Context, cfg BucketConfig) (*Bucket, error) {
	if err := s3utils.CheckValidBucketName(cfg.Bucket); err != nil {
		return nil, fmt.Errorf("artifacts: %q is not a valid bucket name", cfg.Bucket)
	}
	name := BucketScheme + cfg.Bucket
	if cfg.Prefix != "" {
		name += "/" + cfg.Prefix
	}
	host, secure, service := "s3.amazonaws.com", true, "AWS S3"
	if e := strings.TrimSpace(cfg.Endpoint); e != "" {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("artifacts: the S3 endpoint of %s is not an http(s) URL with a host and no path", name)
		}
		host, secure, service = u.Host, u.Scheme == "https", u.Scheme+"://"+u.Host
	}
	b := &Bucket{
		bucket: cfg.Bucket, prefix: cfg.Prefix, timeout: cfg.Timeout,
		where:   name + " at " + service,
		secrets: []string{cfg.SecretAccessKey, cfg.SessionToken},
	}
	if b.timeout <= 0 {
		b.timeout = DefaultBucketTimeout
	}
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return nil, fmt.Errorf("artifacts: no access key for %s", b.where)
	}
	c, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
		Secure: secure,
		Region: strings.TrimSpace(cfg.Region),
		// A few tries: a service that does not answer fails a request in
		// seconds, not after the client's ten.
		MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("artifacts: %s: %s", b.where, b.redact(err.Error()))
	}
	b.client = c
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, b.explain("checking the bucket", err)
	}
	if !ok {
		return nil, fmt.Errorf("artifacts: the bucket %q does not exist at %s", cfg.Bucket, service)
	}
	return b, nil
}

// String names the bucket and its service, never the keys.
func (b *Bucket) String() string { return b.where }

// key is the object key of a file, or with name "" the prefix of a
// directory's objects (ending in a slash). The caller has checked the
// ids and the name.
func (b *Bucket) key(orgID, dirID, name string) string {
	k := orgID + "/" + dirID + "/" + name
	if b.prefix != "" {
		k = b.prefix + "/" + k
	}
	return k
}

// put uploads the size bytes of f as key, with modTime in its metadata.
func (b *Bucket) put(key string, f io.ReaderAt, size int64, modTime time.Time, contentType string) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	_, err := b.client.PutObject(ctx, b.bucket, key, io.NewSectionReader(f, 0, size), size, minio.PutObjectOptions{
		ContentType:  contentType,
		UserMetadata: map[string]string{metaModTime: modTime.UTC().Format(time.RFC3339Nano)},
	})
	if err != nil {
		return b.explain("storing "+key, err)
	}
	return nil
}

// open returns the object key for reading, with its modification time.
// An object that is not there is an error that wraps fs.ErrNotExist.
func (b *Bucket) open(ctx context.Context, key string) (io.ReadSeekCloser, time.Time, error) {
	info, err := b.client.StatObject(ctx, b.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if code := minio.ToErrorResponse(err).Code; code == "NoSuchKey" || code == "NotFound" {
			return nil, time.Time{}, fmt.Errorf("artifacts: %s: %w", key, fs.ErrNotExist)
		}
		return nil, time.Time{}, b.explain("reading "+key, err)
	}
	mod := info.LastModified
	if v := info.UserMetadata[metaModTime]; v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			mod = t
		}
	}
	return &object{ctx: ctx, b: b, key: key, etag: info.ETag, size: info.Size}, mod, nil
}

// removeDir deletes every object of a directory (a run's). None is not an
// error.
func (b *Bucket) removeDir(orgID, dirID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	prefix := b.key(orgID, dirID, "")
	var errs []error
	for info := range b.client.ListObjectsIter(ctx, b.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if info.Err != nil {
			errs = append(errs, b.explain("listing "+prefix, info.Err))
			break
		}
		if err := b.client.RemoveObject(ctx, b.bucket, info.Key, minio.RemoveObjectOptions{}); err != nil {
			errs = append(errs, b.explain("removing "+info.Key, err))
		}
	}
	return errors.Join(errs...)
}

// explain turns a client error into a message for the operator: what was
// being done, where, and why, without the keys.
func (b *Bucket) explain(what string, err error) error {
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "":
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return fmt.Errorf("artifacts: %s in %s: %w", what, b.where, err)
		}
		return fmt.Errorf("artifacts: %s in %s: the service cannot be reached: %s", what, b.where, b.redact(s3err.NetCause(err).Error()))
	case "NoSuchBucket":
		return fmt.Errorf("artifacts: %s in %s: the bucket does not exist", what, b.where)
	}
	if s3err.RefusedKey(resp.Code) {
		return fmt.Errorf("artifacts: %s in %s: the service refused the access key (%s)", what, b.where, resp.Code)
	}
	return fmt.Errorf("artifacts: %s in %s: the service answered %s: %s", what, b.where, resp.Code, b.redact(resp.Message))
}

// redact replaces the keys in text.
func (b *Bucket) redact(text string) string { return s3err.Redact(text, b.secrets...) }

// object reads an object as an io.ReadSeeker for http.ServeContent: its
// size is known from the stat, seeks cost nothing, and a read opens one
// ranged GET from the current offset, kept open for the reads after it.
// Every GET asks for the version the stat saw (If-Match on its ETag), so
// that a response never mixes two versions.
type object struct {
	ctx  context.Context
	b    *Bucket
	key  string
	etag string
	size int64

	mu   sync.Mutex
	off  int64
	body io.ReadCloser // reading from off, nil until a read needs it
}

func (o *object) Read(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.off >= o.size {
		return 0, io.EOF
	}
	if o.body == nil {
		opts := minio.GetObjectOptions{}
		if o.off > 0 {
			if err := opts.SetRange(o.off, 0); err != nil {
				return 0, err
			}
		}
		if o.etag != "" {
			_ = opts.SetMatchETag(o.etag)
		}
		body, _, _, err := minio.Core{Client: o.b.client}.GetObject(o.ctx, o.b.bucket, o.key, opts)
		if err != nil {
			return 0, o.b.explain("reading "+o.key, err)
		}
		o.body = body
	}
	n, err := o.body.Read(p)
	o.off += int64(n)
	if err == io.EOF && o.off < o.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (o *object) Seek(offset int64, whence int) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.off + offset
	case io.SeekEnd:
		abs = o.size + offset
	default:
		return 0, errors.New("artifacts: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("artifacts: negative position")
	}
	if abs != o.off && o.body != nil {
		o.body.Close()
		o.body = nil
	}
	o.off = abs
	return abs, nil
}

func (o *object) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.body != nil {
		err := o.body.Close()
		o.body = nil
		return err
	}
	return nil
}

var _ io.ReadSeekCloser = (*object)(nil)

// uploadFile copies the first size bytes of f, the directory's file name,
// to the Store's bucket (when it has one), with the file's modification
// time. The caller has checked the ids and the name.
func (s *Store) uploadFile(f *os.File, orgID, dirID, name string, size int64, modTime time.Time) error {
	if s.bucket == nil {
		return nil
	}
	return s.bucket.put(s.bucket.key(orgID, dirID, name), f, size, modTime, ContentType(name))
}
