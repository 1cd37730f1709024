package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: `Load it in the current shell, for example:
   source <(rocmk completion bash)
   rocmk completion fish > ~/.config/fish/completions/rocmk.fish`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("completion needs one shell name: bash, zsh or fish")
			}
			return runCompletion(c.App, c.Args().First(), envOf(c))
		},
	}
}

func runCompletion(app *cli.App, shell string, env Env) error {
	switch shell {
	case "bash":
		_, err := fmt.Fprint(env.Stdout, bashCompletion)
		return err
	case "zsh":
		_, err := fmt.Fprint(env.Stdout, zshCompletion)
		return err
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(env.Stdout, s)
		return err
	}
	return usagef("unknown shell %q: want bash, zsh or fish", shell)
}

// The bash and zsh scripts ask rocmk itself for candidates through urfave/cli's
// --generate-bash-completion protocol.
const bashCompletion = `# rocmk bash completion
_rocmk_complete() {
  local cur opts
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == -* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _rocmk_complete rocmk
`

const zshCompletion = `#compdef rocmk
_rocmk() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _rocmk rocmk
`
