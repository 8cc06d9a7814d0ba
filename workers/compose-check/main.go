// compose-check validates docker-compose.yml and the Dockerfile without a Docker engine, with
// the libraries Docker itself uses: compose-go (the loader and schema of `docker compose
// config`) and BuildKit's Dockerfile parser (the one `docker build` runs). Run by
// `npm run check:compose` (workers/compose-check.sh).
//
//	compose-check <docker-compose.yml> <env file> <Dockerfile>
package main

import (
	"context"
	"fmt"
	"os"
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
	for name := range project.Services {
		names = append(names, name)
	}
	fmt.Printf("compose-check: %s is valid: %d services (%s)\n", composeFile, len(names), strings.Join(names, ", "))

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
	stages, _, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		fail("%s is invalid: %v", dockerfile, err)
	}
	var described []string
	for _, s := range stages {
		name := s.Name
		if name == "" {
			name = "(final)"
		}
		described = append(described, fmt.Sprintf("%s from %s", name, s.BaseName))
	}
	fmt.Printf("compose-check: %s is valid: %d stages (%s)\n", dockerfile, len(stages), strings.Join(described, "; "))
}
