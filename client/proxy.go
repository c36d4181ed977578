package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// ProxyLocation is where the browser's traffic exits. On the wire it is one
// of: a location name ("RESIDENTIAL", "RESIDENTIAL_GB", "NONE", ...), a
// geographic target {"country": "US", "subdivision": "CA", "city": "..."},
// or a self-hosted proxy {"url": "http://user:pw@host:port"}. Exactly one
// of Name, Country or URL is set; the zero value is not a valid location and
// fields of this type are pointers where the API allows null.
//
// A shape this package does not know is kept in Raw and written back as it
// came.
type ProxyLocation struct {
	Name        string // a location name such as ProxyResidential
	Country     string // ISO 3166-1 alpha-2 country of a geographic target
	Subdivision string // optional region of a geographic target (at most 10 characters)
	City        string // optional city of a geographic target (at most 100 characters)
	URL         string // a self-hosted proxy URL
	Raw         json.RawMessage
}

// Proxy location names. The five US-* names are deprecated upstream.
const (
	ProxyResidential    = "RESIDENTIAL"
	ProxyResidentialISP = "RESIDENTIAL_ISP"
	ProxyNone           = "NONE"
)

// Proxy returns a named proxy location, for the request fields that take a
// *ProxyLocation.
func Proxy(name string) *ProxyLocation { return &ProxyLocation{Name: name} }

type proxyObject struct {
	Country     string `json:"country,omitempty"`
	Subdivision string `json:"subdivision,omitempty"`
	City        string `json:"city,omitempty"`
	URL         string `json:"url,omitempty"`
}

// MarshalJSON writes the location in its wire shape.
func (p ProxyLocation) MarshalJSON() ([]byte, error) {
	switch {
	case p.Name != "":
		return json.Marshal(p.Name)
	case p.URL != "":
		return json.Marshal(proxyObject{URL: p.URL})
	case p.Country != "":
		return json.Marshal(proxyObject{Country: p.Country, Subdivision: p.Subdivision, City: p.City})
	case len(p.Raw) > 0:
		return p.Raw, nil
	}
	return nil, fmt.Errorf("client: ProxyLocation has none of Name, Country or URL set")
}

// UnmarshalJSON reads any of the wire shapes.
func (p *ProxyLocation) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	*p = ProxyLocation{}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &p.Name)
	}
	var o proxyObject
	if err := json.Unmarshal(b, &o); err != nil || (o.URL == "" && o.Country == "") {
		p.Raw = append(json.RawMessage(nil), b...)
		return nil
	}
	p.Country, p.Subdivision, p.City, p.URL = o.Country, o.Subdivision, o.City, o.URL
	return nil
}

// String returns the name, the URL, or country[/subdivision[/city]].
func (p ProxyLocation) String() string {
	switch {
	case p.Name != "":
		return p.Name
	case p.URL != "":
		return p.URL
	case p.Country != "":
		s := p.Country
		if p.Subdivision != "" {
			s += "/" + p.Subdivision
		}
		if p.City != "" {
			s += "/" + p.City
		}
		return s
	}
	return string(p.Raw)
}

// proxyLocationNames are the location names proxy_location takes (the
// service's ProxyLocation enumeration), in the service's order. The five
// US-* names are deprecated but still accepted. A mapping (a geographic
// target, a self-hosted proxy, or any other object) is not checked: the
// service accepts any mapping there.
var proxyLocationNames = []string{
	"RESIDENTIAL", "US-CA", "US-NY", "US-TX", "US-FL", "US-WA",
	"RESIDENTIAL_ES", "RESIDENTIAL_IE", "RESIDENTIAL_GB", "RESIDENTIAL_IN", "RESIDENTIAL_JP",
	"RESIDENTIAL_FR", "RESIDENTIAL_DE", "RESIDENTIAL_NZ", "RESIDENTIAL_ZA", "RESIDENTIAL_AR",
	"RESIDENTIAL_AU", "RESIDENTIAL_BR", "RESIDENTIAL_TR", "RESIDENTIAL_CA", "RESIDENTIAL_MX",
	"RESIDENTIAL_IT", "RESIDENTIAL_NL", "RESIDENTIAL_PH", "RESIDENTIAL_KR", "RESIDENTIAL_SA",
	ProxyResidentialISP, ProxyNone,
}

// ProxyLocationNames returns the location names the service accepts as a
// proxy_location, in its order: what Validate checks a name against.
func ProxyLocationNames() []string { return slices.Clone(proxyLocationNames) }
