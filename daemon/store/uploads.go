package store

import "github.com/abctl/abctl/client"

// RecordArtifact names an artifact (a run's file or an uploaded one) in
// NotFoundError.
const RecordArtifact Record = "artifact"

// PrefixUploadDir is the prefix of the directory ids of uploaded files
// (upl_<snowflake>): the artifact directory holds them beside the runs'.
const PrefixUploadDir = "upl"

// Upload is the record of one uploaded file.
type Upload struct {
	// ID is the file's artifact id (a_<snowflake>), which
	// GET /v1/artifacts/{artifact_id}/content takes.
	ID string `json:"id"`
	// Dir is the directory (upl_<snowflake>) that holds the file in the
	// organization's part of the artifact directory: the "run id" of its
	// artifact URL.
	Dir string `json:"dir"`
	// Name is the file's name in Dir: the name the client gave, made safe.
	Name      string      `json:"name"`
	Size      int64       `json:"size"`   // bytes
	SHA256    string      `json:"sha256"` // lowercase hex
	CreatedAt client.Time `json:"created_at"`
}
