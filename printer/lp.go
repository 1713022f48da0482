package printer

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// LP prints with the lp command, where CUPS cannot be reached over IPP:
//
//	lp [-h server] -d <queue> -n <copies> -t <name> [-o media=<media>] -o print-scaling=none
//
// with the PDF on its standard input. lp returns once the job is queued,
// so the result is always StatePending.
type LP struct {
	Command string // "" means "lp" from PATH
	Server  string // CUPS server (host[:port]); "" means lp's default
	Queue   string
}

// lpArgs builds lp's arguments.
func (p *LP) args(job Job) []string {
	var args []string
	if p.Server != "" {
		args = append(args, "-h", p.Server)
	}
	args = append(args, "-d", p.Queue, "-n", strconv.Itoa(job.Copies), "-t", job.Name)
	if job.Media != "" {
		args = append(args, "-o", "media="+job.Media)
	}
	return append(args, "-o", "print-scaling=none", "--", "-")
}

// lpRequestID reads the job id from lp's answer: "request id is Q-12 (1 file(s))".
var lpRequestID = regexp.MustCompile(`request id is (\S+)`)

// Print queues the job. It returns ENOTFOUND when lp or the queue does not
// exist, and EUNAVAILABLE with lp's message when lp refuses the job.
func (p *LP) Print(ctx context.Context, job Job) (Result, error) {
	const op = "printer.LP.Print"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	res, err := p.run(ctx, op, p.args(job), job.PDF)
	if err != nil {
		return Result{}, err
	}
	res.Copies = job.Copies
	return res, nil
}

// run runs lp with args and the document on its standard input, and reads
// the job id from its answer.
func (p *LP) run(ctx context.Context, op string, args []string, doc []byte) (Result, error) {
	command := p.Command
	if command == "" {
		command = "lp"
	}
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.Stdin = bytes.NewReader(doc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stderr.String()), "lp:"))
		var exit *exec.ExitError
		switch {
		case !errors.As(err, &exit):
			return Result{}, notFound(op, err, "no se pudo ejecutar %s: ¿está instalado CUPS?", command)
		case strings.Contains(reason, "does not exist") || strings.Contains(reason, "no existe"):
			return Result{}, notFound(op, err, "la impresora «%s» no existe: %s", p.Queue, reason)
		}
		return Result{}, unavailable(op, err, "la impresora «%s» rechazó el trabajo: %s", p.Queue, reason)
	}
	res := Result{Backend: BackendLP, Printer: p.Queue, State: StatePending}
	if m := lpRequestID.FindStringSubmatch(stdout.String()); m != nil {
		res.JobID = m[1]
	}
	return res, nil
}

// PrintRaw queues a raw job with lp -o raw, which CUPS passes to the
// printer untouched: lp [-h server] -d <queue> -t <name> -o raw -- -, every
// copy in the data. Its errors are those of Print.
func (p *LP) PrintRaw(ctx context.Context, job RawJob) (Result, error) {
	const op = "printer.LP.PrintRaw"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	var args []string
	if p.Server != "" {
		args = append(args, "-h", p.Server)
	}
	args = append(args, "-d", p.Queue, "-t", job.Name, "-o", "raw", "--", "-")
	res, err := p.run(ctx, op, args, job.payload())
	if err != nil {
		return Result{}, err
	}
	res.Copies = job.Copies
	return res, nil
}
