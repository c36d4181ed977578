module github.com/abctl/abctl

go 1.26

require github.com/spf13/cobra v1.10.2

require gopkg.in/yaml.v3 v3.0.1

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	go.etcd.io/bbolt v1.4.3
	golang.org/x/sys v0.29.0 // indirect
)
