package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfo_completedFrom(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-20T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	cases := []struct {
		name string
		b    buildInfo
		bi   debug.BuildInfo
		want buildInfo
	}{
		{"linker values win", buildInfo{Version: "v1.4.0", Commit: "fff", Date: "2026-01-02T03:04:05Z"},
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v9.9.9"}, Settings: vcs},
			buildInfo{Version: "v1.4.0", Commit: "fff", Date: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"}},
		{"from a tagged module and the VCS stamp", buildInfo{Version: "dev"},
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.5.0"}, Settings: vcs},
			buildInfo{Version: "v1.5.0", Commit: "abc123-dirty", Date: "2026-11-20T10:00:00Z", GoVersion: "go1.26.8"}},
		{"a development build", buildInfo{Version: "dev"},
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			buildInfo{Version: "dev", GoVersion: "go1.26.8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.completedFrom(&c.bi); got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestBuildInfo_String(t *testing.T) {
	got := buildInfo{Version: "v1.0.0", GoVersion: "go1.26.8", Platform: "windows/amd64"}.String()
	want := "v1.0.0\ncommit: desconocido\ncompilado: desconocido\ngo: go1.26.8\nsistema: windows/amd64"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Count(got, "\n") != 4 {
		t.Errorf("want five lines")
	}
}
