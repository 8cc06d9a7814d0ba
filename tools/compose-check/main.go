// compose-check validates docker-compose.yml and the Dockerfile without a Docker engine, with
// the libraries Docker itself uses: compose-go (the loader and schema of `docker compose
// config`) and BuildKit's Dockerfile parser (the one `docker build` runs). Run by
// `npm run check:compose` (tools/compose-check.sh).
//
//	compose-check <docker-compose.yml> <env file> <Dockerfile>
package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compose-check: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 4 {
		fail("usage: compose-check <docker-compose.yml> <env file> <Dockerfile>")
	}
	composeFile, envFile, dockerfile := os.Args[1], os.Args[2], os.Args[3]

	opts, err := cli.NewProjectOptions([]string{composeFile}, cli.WithEnvFiles(envFile), cli.WithDotEnv, cli.WithName("platform"))
	if err != nil {
		fail("%v", err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fail("%s is invalid: %v", composeFile, err)
	}
	var names []string
	for name, service := range project.Services {
		names = append(names, name)
		if service.Image != "" {
			if why := unpinned(service.Image); why != "" {
				fail("%s: service %s: image %s %s", composeFile, name, service.Image, why)
			}
		}
	}
	sort.Strings(names)
	fmt.Printf("compose-check: %s is valid: %d services (%s), every image pinned\n", composeFile, len(names), strings.Join(names, ", "))

	f, err := os.Open(dockerfile)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	ast, err := parser.Parse(f)
	if err != nil {
		fail("%s: %v", dockerfile, err)
	}
	for _, w := range ast.Warnings {
		fail("%s: %s", dockerfile, w.Short)
	}
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		fail("%s is invalid: %v", dockerfile, err)
	}
	// The ARGs before the first FROM, with their defaults: what `FROM ${NAME}` reads.
	defaults := map[string]string{}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			if kv.Value != nil {
				defaults[kv.Key] = *kv.Value
			}
		}
	}
	stageNames := map[string]bool{}
	var described []string
	for _, s := range stages {
		name := s.Name
		if name == "" {
			name = "(final)"
		}
		base := os.Expand(s.BaseName, func(k string) string { return defaults[k] })
		// A base that is an earlier stage is not an image.
		if !stageNames[strings.ToLower(base)] {
			if why := unpinned(base); why != "" {
				fail("%s: stage %s: base image %s %s", dockerfile, name, base, why)
			}
		}
		stageNames[strings.ToLower(s.Name)] = true
		described = append(described, fmt.Sprintf("%s from %s", name, base))
	}
	fmt.Printf("compose-check: %s is valid: %d stages (%s), every base image pinned\n", dockerfile, len(stages), strings.Join(described, "; "))
}

// pinned: a digest, or a tag that names a version down to its minor one (not `latest`, not a
// major version alone, which moves with every release). Answers why not, or "" when it is.
func unpinned(image string) string {
	ref, digest, _ := strings.Cut(image, "@")
	if digest != "" && !strings.HasPrefix(digest, "sha256:") {
		return "has a malformed digest"
	}
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash {
		if digest != "" {
			return ""
		}
		return "has no tag: pin a version"
	}
	tag := ref[colon+1:]
	if strings.Contains(strings.ToLower(tag), "latest") {
		return "is tagged latest: pin a version"
	}
	if digest == "" && !exactVersion.MatchString(tag) {
		return "floats (no minor version, no digest): pin a version such as 16.4 or a digest"
	}
	return ""
}

// A tag naming at least a minor version (16.4, 7.0.28, 1.29.1) or a dated release (RELEASE.2025-…).
var exactVersion = regexp.MustCompile(`\d+\.\d+|^RELEASE\.\d{4}-`)
