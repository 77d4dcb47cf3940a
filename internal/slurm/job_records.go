package slurm

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// JobRecordsWait bounds how long a deletion waits for slurmctld to hand its queued job
// records to slurmdbd.
const JobRecordsWait = 2 * time.Minute

// dbdAgentQueue matches sdiag's count of messages slurmctld still has to send to slurmdbd.
var dbdAgentQueue = regexp.MustCompile(`(?m)^\s*DBD Agent queue size:\s*(\d+)\s*$`)

// queuedJobRecords reads sdiag's DBD agent queue size; found is false when slurmctld runs
// without slurmdbd and so has no such queue.
func queuedJobRecords(sdiag string) (n int, found bool) {
	m := dbdAgentQueue.FindStringSubmatch(sdiag)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// waitJobRecordsSent polls sdiag on the controller until slurmctld has no message left for
// slurmdbd. A deletion must come after: slurmdbd keeps an association or QOS, marked deleted,
// only when a job record already names it, and removes one less than a day old outright
// otherwise, so the records slurmctld still queued (jobs that just ended, whose start was not
// sent yet, or all of them while slurmdbd was busy) would arrive for an association that is
// gone, and no longer be found under the user's account.
func waitJobRecordsSent(ctx context.Context, ex transport.Executor) error {
	return poll(ctx, JobRecordsWait, "wait for slurmctld to send its job records to slurmdbd (sdiag's DBD Agent queue size)", func(ctx context.Context) error {
		res, err := ex.Sudo(ctx, transport.ScriptEnv+"sdiag", nil)
		if err != nil {
			return fmt.Errorf("sdiag: %w", err)
		}
		if n, found := queuedJobRecords(string(res.Stdout)); found && n > 0 {
			return fmt.Errorf("slurmctld still has %d messages for slurmdbd: %w", n, errNotYet)
		}
		return nil
	})
}
