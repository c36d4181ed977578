package testsite

import "crypto/sha256"

// The SFTP account the test site's serve command offers with -sftp, for
// the storage example (examples/agents/sftp-upload.yaml): the user, the
// password, and the seed of the server's host key, fixed so that its
// fingerprint (SFTPHostKeyFingerprint) is the same at every start and
// an agent can name it.
const (
	SFTPUser               = "demo"
	SFTPPassword           = "northwind-sftp-password"
	SFTPHostKeyFingerprint = "SHA256:gVIl12GQcpQx2XneTRGqZJiW1ws7O+Kh8Zmuc70HLEE"
)

// SFTPHostKeySeed is the seed of the SFTP server's ed25519 host key.
func SFTPHostKeySeed() []byte {
	sum := sha256.Sum256([]byte("abctl test site SFTP host key"))
	return sum[:]
}
