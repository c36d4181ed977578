package blocks

// The blocks' work is done by the methods of a type per family, each of
// which embeds the Interpreter: the Interpreter keeps the flow (lists,
// loops, branches, retries, outputs) and what every block shares (the
// session, the run's values, the step log); exec in blocks.go hands each
// block to its family. A helper that several families call stays a method
// of the Interpreter, and so do the blocks a model drives (model.go), on
// which the others fall back.
type (
	browserBlocks struct{ *Interpreter } // browse.go, login.go: the browser without a model
	fileBlocks    struct{ *Interpreter } // fileparse.go, http.go
	pdfBlocks     struct{ *Interpreter } // pdf.go
	storageBlocks struct{ *Interpreter } // storage.go, storage_sftp.go
	mailBlocks    struct{ *Interpreter } // email.go, inbox.go
	sheetsBlocks  struct{ *Interpreter } // sheets.go
	peopleBlocks  struct{ *Interpreter } // human.go, trigger.go, code.go: people, other agents, code
)
