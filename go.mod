module github.com/abctl/abctl

go 1.26

require github.com/spf13/cobra v1.10.2

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	gopkg.in/yaml.v3 v3.0.1
)

require github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	go.etcd.io/bbolt v1.4.3
	golang.org/x/sys v0.29.0 // indirect
)
