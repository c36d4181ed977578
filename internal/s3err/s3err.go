// Package s3err helps say, for people, why a call to an S3-compatible
// service failed, without its keys: the storage blocks
// (localrun/engine/blocks/storage) and the run files kept in a bucket
// (daemon/artifacts) describe failures the same way.
package s3err

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// Redact replaces every secret of four bytes or more in text.
func Redact(text string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}

// NetCause is why a connection failed, without the request and the
// operation that wrap it (the request's URL may carry a presigned query).
func NetCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) {
		err = op.Err
	}
	return err
}

// RefusedKey reports whether an error code of the service (an S3 error
// response's Code) means that it refused the access key: unknown, wrong,
// expired, or not allowed.
func RefusedKey(code string) bool {
	switch code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AccessDenied", "AuthorizationHeaderMalformed":
		return true
	}
	return false
}
