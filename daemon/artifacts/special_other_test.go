//go:build !unix

package artifacts

import "testing"

func testSpecialFiles(t *testing.T, e *env, runDir string) {}
