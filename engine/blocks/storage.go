package blocks

import (
	"context"
	"errors"

	"github.com/abctl/abctl/client"
)

// Storage blocks: upload_to_s3, download_to_s3, file_upload.

// S3Config is the S3-compatible storage blocks use when they name none.
type S3Config struct{}

func checkStorage(b client.Block) error { return errors.New("storage blocks: not yet") }

func (in *Interpreter) uploadToS3(ctx context.Context, b *client.UploadToS3Block, sc *scope) (any, error) {
	return nil, errors.New("upload_to_s3: not yet")
}

func (in *Interpreter) downloadToS3(ctx context.Context, b *client.DownloadToS3Block, sc *scope) (any, error) {
	return nil, errors.New("download_to_s3: not yet")
}

func (in *Interpreter) fileUpload(ctx context.Context, b *client.FileUploadBlock, sc *scope) (any, error) {
	return nil, errors.New("file_upload: not yet")
}
