package api

// The handlers of each resource are the methods of a type of its own,
// which embeds the Server: the Server keeps what every route shares (the
// store, the runner, the error table, the helpers), and routes.go mounts
// each group's handlers. A helper that other groups call stays a method of
// the Server.
type (
	agentsAPI      struct{ *Server } // agents.go, agentruns.go
	schedulesAPI   struct{ *Server } // schedules.go
	runsAPI        struct{ *Server } // runs.go, runlist.go, login.go, downloadfiles.go
	humanAPI       struct{ *Server } // human.go
	credentialsAPI struct{ *Server } // credentials.go
	filesAPI       struct{ *Server } // uploads.go, artifactcontent.go
	profilesAPI    struct{ *Server } // profiles.go
	sessionsAPI    struct{ *Server } // browsersessions.go
	tagRegistryAPI struct{ *Server } // tags.go (the agents' and runs' tags: tagRoutes)
	customLLMsAPI  struct{ *Server } // customllms.go
	foldersAPI     struct{ *Server } // folders.go
	scriptsAPI     struct{ *Server } // scripts.go
)
