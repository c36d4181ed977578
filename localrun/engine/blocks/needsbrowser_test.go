package blocks

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/abctl/abctl/client"
)

// TestNeedsBrowserNamesEveryBlockType: every block type of the contract is
// classified on purpose, so that a block type added later fails here until
// someone decides whether it opens the run's browser (a block that touches
// the page without one finds no browser).
func TestNeedsBrowserNamesEveryBlockType(t *testing.T) {
	pageBlocks := map[client.BlockType]bool{
		client.BlockTypeGotoURL: true, client.BlockTypeAction: true, client.BlockTypeFileDownload: true,
		client.BlockTypeLogin: true, client.BlockTypeNavigation: true, client.BlockTypeExtraction: true,
		client.BlockTypeTask: true, client.BlockTypeTaskV2: true, client.BlockTypeValidation: true,
		client.BlockTypePrintPage: true,
	}
	// The others never open it; a conditional does only with a criterion
	// in prose (below), a loop as the blocks inside it do.
	others := map[client.BlockType]bool{
		client.BlockTypeForLoop: true, client.BlockTypeWhileLoop: true, client.BlockTypeConditional: true,
		client.BlockTypeCode: true, client.BlockTypeTextPrompt: true, client.BlockTypeDownloadToS3: true,
		client.BlockTypeUploadToS3: true, client.BlockTypeFileUpload: true, client.BlockTypeSendEmail: true,
		client.BlockTypeFileURLParser: true, client.BlockTypePDFParser: true, client.BlockTypeWait: true,
		client.BlockTypeHumanInteraction: true, client.BlockTypeHTTPRequest: true, client.BlockTypeWorkflowTrigger: true,
		client.BlockTypeGoogleSheetsRead: true, client.BlockTypeGoogleSheetsWrite: true, client.BlockTypePDFFill: true,
		client.BlockTypeSplitPDF: true, client.BlockTypeEmailInbox: true,
	}
	for _, bt := range client.BlockTypes {
		if pageBlocks[bt] == others[bt] {
			t.Errorf("block type %s: say here whether it works on the run's page (NeedsBrowser)", bt)
		}
	}
	for _, bt := range client.BlockTypes {
		var bs client.Blocks
		if err := json.Unmarshal(fmt.Appendf(nil, `[{"block_type":%q,"label":"b"}]`, bt), &bs); err != nil || len(bs) != 1 {
			t.Fatalf("%s: %v", bt, err)
		}
		if got := NeedsBrowser(bs[0]); got != pageBlocks[bt] {
			t.Errorf("NeedsBrowser(%s) = %v, want %v", bt, got, pageBlocks[bt])
		}
	}

	prose := &client.ConditionalBlock{BranchConditions: []client.BranchCondition{
		{Criteria: json.RawMessage(`{"criteria_type":"prompt","expression":"the cart is empty"}`), NextBlockLabel: "x"},
		{IsDefault: true},
	}}
	if !NeedsBrowser(prose) {
		t.Error("a conditional judged in prose against the page needs the browser")
	}
}
