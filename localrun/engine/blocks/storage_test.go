package blocks

import (
	"strings"
	"testing"

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
