module github.com/abctl/abctl

go 1.26
