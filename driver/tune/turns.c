/* The turns of several tuning jobs of one `hetc tune` (turns.h). */
#include "tune/turns.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


/* ---- the job's side ----------------------------------------------------------- */

static int turns_fd = -2; /* -2: not looked up yet; -1: not a job */

static int job_socket(void) {
  if (turns_fd == -2) {
    /* A process the job started inherits the variable but not the socket
     * (close-on-exec): whatever that number names there is not it. */
    const char *value = getenv(HETC_TUNE_TURNS_FD);
    struct stat st;
    turns_fd = value && *value ? atoi(value) : -1;
    if (turns_fd >= 0 && (fstat(turns_fd, &st) != 0 || !S_ISSOCK(st.st_mode))) turns_fd = -1;
  }
  return turns_fd;
}

static int send_message(int fd, char op, char stage, int is_cpu, const char *device) {
  hetc_turn_message_t message;
  memset(&message, 0, sizeof(message));
  message.op = op;
  message.stage = stage;
  message.is_cpu = (char)(is_cpu != 0);
  strncpy(message.device, device ? device : "", sizeof(message.device) - 1);
  const char *p = (const char *)&message;
  for (size_t left = sizeof(message); left > 0;) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    p += n;
    left -= (size_t)n;
  }
  return 1;
}

int hetc_turn_ask(char stage, int is_cpu, const char *device) {
  const int fd = job_socket();
  if (fd < 0 || !send_message(fd, 'a', stage, is_cpu, device)) return 0;
  char granted = 0;
  for (;;) {
    const ssize_t n = read(fd, &granted, 1);
    if (n == 1) return 1;
    if (n < 0 && errno == EINTR) continue;
    /* The scheduler is gone: the machine-wide locks alone keep turns. */
    turns_fd = -1;
    return 0;
  }
}

void hetc_turn_end(char stage, int is_cpu, const char *device) {
  const int fd = job_socket();
  if (fd >= 0) send_message(fd, 'e', stage, is_cpu, device);
}

/* ---- the scheduler's side ----------------------------------------------------- */

typedef struct turn_t {
  int32_t job;
  char stage;
  int is_cpu;
  char device[161];
} turn_t;

/* Two turns that may not be held at once: measurements of one device, and
 * a measurement of the cores beside anything else that uses them. */
static int conflict(const turn_t *a, const turn_t *b) {
  const int a_cores = a->stage == 'c' || a->is_cpu, b_cores = b->stage == 'c' || b->is_cpu;
  if (a->stage == 'm' && b->stage == 'm' && !strcmp(a->device, b->device)) return 1;
  return (a->stage == 'm' && a->is_cpu && b_cores) || (b->stage == 'm' && b->is_cpu && a_cores);
}

typedef struct turn_list_t {
  turn_t *items;
  int32_t count, capacity;
} turn_list_t;

static int list_add(turn_list_t *list, const turn_t *turn) {
  if (list->count == list->capacity) {
    const int32_t capacity = list->capacity ? 2 * list->capacity : 16;
    turn_t *grown = realloc(list->items, sizeof(turn_t) * (size_t)capacity);
    if (!grown) return 0;
    list->items = grown;
    list->capacity = capacity;
  }
  list->items[list->count++] = *turn;
  return 1;
}

static void list_remove_at(turn_list_t *list, int32_t k) {
  memmove(&list->items[k], &list->items[k + 1], sizeof(turn_t) * (size_t)(list->count - k - 1));
  --list->count;
}

static int conflicts_with(const turn_t *turn, const turn_t *others, int32_t count) {
  for (int32_t k = 0; k < count; ++k)
    if (conflict(turn, &others[k])) return 1;
  return 0;
}

/* Grants, in the order asked, every waiting turn that conflicts neither
 * with those held nor with an earlier one still waiting. */
static hetc_status_t grant(turn_list_t *held, turn_list_t *waiting, const int *sockets) {
  turn_list_t blocked = {NULL, 0, 0};
  hetc_status_t status = NULL;
  for (int32_t k = 0; !status && k < waiting->count;) {
    const turn_t *turn = &waiting->items[k];
    if (conflicts_with(turn, held->items, held->count) || conflicts_with(turn, blocked.items, blocked.count)) {
      if (!list_add(&blocked, turn)) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuning jobs' turns");
      ++k;
      continue;
    }
    if (!list_add(held, turn)) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuning jobs' turns");
      break;
    }
    const char granted = 'g';
    if (write(sockets[turn->job], &granted, 1) != 1) { /* the job is ending: its EOF cleans up */
    }
    list_remove_at(waiting, k);
  }
  free(blocked.items);
  return status;
}

static void forget_job(turn_list_t *list, int32_t job) {
  for (int32_t k = list->count - 1; k >= 0; --k)
    if (list->items[k].job == job) list_remove_at(list, k);
}

hetc_status_t hetc_tune_serve_turns(const int *sockets, const int *pids, int32_t count, int *out_statuses) {
  struct pollfd *polled = calloc((size_t)count, sizeof(struct pollfd));
  if (!polled) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuning jobs' turns");
  turn_list_t held = {NULL, 0, 0}, waiting = {NULL, 0, 0};
  int32_t open_jobs = count;
  for (int32_t k = 0; k < count; ++k) polled[k] = (struct pollfd){.fd = sockets[k], .events = POLLIN};
  hetc_status_t status = NULL;
  while (!status && open_jobs > 0) {
    if (poll(polled, (nfds_t)count, -1) < 0) {
      if (errno == EINTR) continue; /* Ctrl-C reaches the jobs too: they end, and so do their sockets */
      status = hetc_status_new(HETC_STATUS_INTERNAL, "tuning jobs' turns: poll: %s", strerror(errno));
      break;
    }
    for (int32_t job = 0; !status && job < count; ++job) {
      if (polled[job].fd < 0 || !(polled[job].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      hetc_turn_message_t message;
      ssize_t n;
      do n = read(polled[job].fd, &message, sizeof(message));
      while (n < 0 && errno == EINTR);
      if (n != (ssize_t)sizeof(message)) {
        /* The job ended (or broke the protocol): what it held is free. */
        forget_job(&held, job);
        forget_job(&waiting, job);
        close(polled[job].fd);
        polled[job].fd = -1;
        --open_jobs;
        while (waitpid(pids[job], &out_statuses[job], 0) < 0 && errno == EINTR) {
        }
      } else if (message.op == 'a') {
        turn_t turn = {.job = job, .stage = message.stage, .is_cpu = message.is_cpu};
        memcpy(turn.device, message.device, sizeof(turn.device));
        turn.device[sizeof(turn.device) - 1] = '\0';
        if (!list_add(&waiting, &turn)) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuning jobs' turns");
      } else {
        for (int32_t k = 0; k < held.count; ++k) {
          const turn_t *turn = &held.items[k];
          if (turn->job == job && turn->stage == message.stage && !strncmp(turn->device, message.device, 160)) {
            list_remove_at(&held, k);
            break;
          }
        }
      }
    }
    if (!status) status = grant(&held, &waiting, sockets);
  }
  free(held.items);
  free(waiting.items);
  free(polled);
  return status;
}
