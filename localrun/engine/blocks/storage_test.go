package blocks

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/abctl/abctl/client"
)

func TestCheckStorage(t *testing.T) {
	base := func(label string) client.BlockBase { return client.BlockBase{Label: label} }
	port := 70000
	for _, tc := range []struct {
		b    client.Block
		want string // "" for accepted
	}{
		{b: &client.UploadToS3Block{BlockBase: base("up")}},
		{b: &client.UploadToS3Block{BlockBase: base("up"), Path: "{{ SKYVERN_DOWNLOAD_DIRECTORY }}"}},
		{b: &client.UploadToS3Block{BlockBase: base("up"), Path: "/etc/passwd"}, want: `block "up" (upload_to_s3): path "/etc/passwd" is a path on the daemon's disk`},
		{b: &client.DownloadToS3Block{BlockBase: base("down")}, want: `block "down" (download_to_s3): it has no url`},
		{b: &client.DownloadToS3Block{BlockBase: base("down"), URL: "https://example.com/a.pdf"}},
		{b: &client.FileUploadBlock{BlockBase: base("put")}},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "S3", S3Bucket: "b"}},
		{b: &client.FileUploadBlock{BlockBase: base("put"), Prompt: "only the invoices"}, want: "prompt (choosing in words which files to upload) needs a language model"},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "azure"}, want: `block "put" (file_upload): storage_type azure is not supported by this daemon`},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "google_drive"}, want: "storage_type google_drive is not supported by this daemon"},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "ftp"}, want: `storage_type "ftp" is not one of s3, sftp, azure, google_drive`},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "sftp"}, want: "storage_type sftp needs sftp_host"},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "sftp", SFTPHost: "h"}, want: "needs sftp_username"},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "sftp", SFTPHost: "h", SFTPUsername: "u"}, want: "needs sftp_password or sftp_private_key"},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "sftp", SFTPHost: "h", SFTPUsername: "u", SFTPPassword: "p", SFTPPort: &port}, want: "sftp_port 70000 is not a port"},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "sftp", SFTPHost: "h", SFTPUsername: "u", SFTPPassword: "p", SFTPHostKey: "not a key"}, want: "sftp_host_key: it is neither a public key"},
		{b: &client.FileUploadBlock{BlockBase: base("put"), StorageType: "sftp", SFTPHost: "h", SFTPUsername: "u", SFTPPassword: "{{ pw }}", SFTPHostKey: "{{ host_key }}"}},
	} {
		err := checkBlock(tc.b, false)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.b, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.b, err, tc.want)
		}
	}
}

func TestParseHostKey(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	pub, _ := ssh.NewPublicKey(priv.Public())
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := ssh.NewPublicKey(otherPriv.Public())
	authorized := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	blob := strings.Fields(authorized)[1]
	for _, given := range []string{
		authorized,
		authorized + " admin@example.com",
		knownhosts.Line([]string{"[sftp.example.com]:2222"}, pub),
		blob,
		ssh.FingerprintSHA256(pub),
		ssh.FingerprintLegacyMD5(pub),
		"MD5:" + ssh.FingerprintLegacyMD5(pub),
	} {
		h, err := parseHostKey(given)
		if err != nil {
			t.Errorf("%q: %v", given, err)
			continue
		}
		if !h.matches(pub) || h.matches(other) {
			t.Errorf("%q: matches the key %v, another key %v", given, h.matches(pub), h.matches(other))
		}
	}
	for _, bad := range []string{"", "ssh-ed25519", "SHA1:abc", "aGVsbG8="} {
		if _, err := parseHostKey(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestJoinKey(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"abctl/", "id", "a b.csv"}, "abctl/id/a b.csv"},
		{[]string{"", "/reports//", "x.csv"}, "reports/x.csv"},
		{[]string{" \\win\\path\\ ", "f"}, "win/path/f"},
		{nil, ""},
	} {
		if got := joinKey(tc.parts...); got != tc.want {
			t.Errorf("joinKey(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}

func TestS3ConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      "http://other:9000",
		"AWS_ENDPOINT_URL_S3":   "http://minio:9000",
		"AWS_DEFAULT_REGION":    "eu-west-3",
		"AWS_ACCESS_KEY_ID":     "AKIA",
		"AWS_SECRET_ACCESS_KEY": "secret",
	}
	got := S3ConfigFromEnv(func(k string) string { return env[k] })
	want := S3Config{Endpoint: "http://minio:9000", Region: "eu-west-3", AccessKeyID: "AKIA", SecretAccessKey: "secret"}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
