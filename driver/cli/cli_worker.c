/* `hetc worker`: claims tuning tasks from a PostgreSQL queue and tunes
 * them (hetc.h's hetc_queue_work; README.md, "Tuning many models on many
 * machines"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc worker [--queue URI] [--targets T[,T...]] [--records PATH] [--lease S] [--idle-exit S]\n"
    "                   [--workers N] [--batch N] [--simulate STORE] [-q]\n"
    "The queue is --queue URI (postgresql://USER@HOST:PORT/DATABASE), else $HETC_QUEUE.\n"
    "--targets: what this worker tunes for (default: every ready plugin here)\n"
    "--records PATH: the store tasks are tuned into (default: the queue's database, shared by every worker)\n"
    "--lease S: how long a claim outlives this worker's last heartbeat, 1 to 86400 (default 60)\n"
    "--idle-exit S: stop after S seconds with nothing to claim (default: wait for work until a signal)\n"
    "--workers N: parallel builds, 1 to 64 (default: the online cores); --batch N: 1 to 256 (default 16)\n"
    "--simulate STORE: replay STORE's records as every device, each batch taking the time it took (asleep),\n"
    "                  each job's records kept under a device of its own (the scaling benchmark)\n"
    "Ctrl-C stops after the batch in flight and gives the task back.\n";

int hetc_cli_worker(int argc, char **argv) {
  const char *queue_uri = NULL, *records = NULL, *simulate = NULL;
  hetc_cli_targets_t targets;
  memset(&targets, 0, sizeof(targets));
  long long lease = 0, workers = 0, batch = 0;
  double idle_exit = 0;
  int quiet = 0;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "worker", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_text(&args, "--queue", "a PostgreSQL URI", &queue_uri) ||
           hetc_cli_targets(&args, "--targets", 16, &targets) || hetc_cli_text(&args, "--records", "a path", &records) ||
           hetc_cli_text(&args, "--simulate", "a records store", &simulate) ||
           hetc_cli_count(&args, "--lease", 1, 86400, &lease) ||
           hetc_cli_seconds(&args, "--idle-exit", 31536000, &idle_exit) ||
           hetc_cli_count(&args, "--workers", 1, 64, &workers) || hetc_cli_count(&args, "--batch", 1, 256, &batch) ||
           hetc_cli_flag(&args, "--quiet|-q", &quiet));
  if (!args.failed && !queue_uri) {
    queue_uri = getenv("HETC_QUEUE");
    if (!queue_uri || !*queue_uri) hetc_cli_error(&args, "no queue: give --queue URI or set HETC_QUEUE");
  }
  if (args.failed) return HETC_EXIT_USAGE;
  hetc_queue_t *queue = NULL;
  hetc_status_t status = hetc_queue_open(queue_uri, &queue);
  if (status) return hetc_cli_report(status);
  hetc_context_t *context = NULL;
  status = hetc_context_create(&context);
  const hetc_worker_options_t options = {
      .struct_size = sizeof(options),
      .targets = targets.count ? targets.names : NULL,
      .num_targets = targets.count,
      .records_path = records,
      .lease_s = (int32_t)lease,
      .idle_exit_s = idle_exit,
      .build_workers = (int32_t)workers,
      .batch = (int32_t)batch,
      .progress = quiet ? NULL : stderr,
      .simulate_path = simulate,
  };
  hetc_worker_summary_t summary;
  memset(&summary, 0, sizeof(summary));
  hetc_interrupt_watch();
  if (!status) status = hetc_queue_work(context, queue, &options, &summary);
  hetc_interrupt_unwatch();
  printf("worker: %d tasks done, %d failed, %d stopped; %lld trials measured\n", (int)summary.tasks_done,
         (int)summary.tasks_failed, (int)summary.tasks_stopped, (long long)summary.trials);
  if (summary.claims > 0)
    printf("worker: %d claims took %.1f ms (median), %.1f ms (95th percentile), %.1f ms at most\n",
           (int)summary.claims, 1e3 * summary.claim_p50_s, 1e3 * summary.claim_p95_s, 1e3 * summary.claim_max_s);
  hetc_context_destroy(context);
  hetc_queue_close(queue);
  return hetc_cli_report(status);
}
