package blocks

import (
	"context"
	"errors"

	"github.com/abctl/abctl/client"
)

// PDF blocks: pdf_parser (with fileparse.go), pdf_fill, split_pdf.

func checkPDF(b client.Block, hasModel bool) error {
	return errors.New("pdf blocks: not yet")
}

func (in *Interpreter) pdfFill(ctx context.Context, b *client.PDFFillBlock, sc *scope) (any, error) {
	return nil, errors.New("pdf_fill: not yet")
}

func (in *Interpreter) splitPDF(ctx context.Context, b *client.SplitPDFBlock, sc *scope) (any, error) {
	return nil, errors.New("split_pdf: not yet")
}
