/* threadpool.c - persistent workers, a shared task counter, and a
 * spin-then-sleep wait on both sides so back-to-back calls (one per GEMM
 * of a model) do not pay a futex wake-up each.
 *
 * Joining a job: a worker bumps in_job, then checks that a job is open.  The
 * caller, when it runs out of tasks, closes the job and waits for in_job to
 * drop to 0.  With sequentially consistent atomics one of the two sees the
 * other (Dekker), so no worker can be inside a job whose fields the next
 * call overwrites. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"
#include "threadpool.h"

/* Polls before a worker sleeps, each with a spin-wait hint: a few
 * milliseconds.  A model run alternates parallel steps with short serial
 * ones; a worker asleep between them costs a futex wake-up per step, which
 * in a virtual machine (an inter-processor interrupt through the
 * hypervisor) can be tens of microseconds - as long as a small step. */
#define SPIN_ROUNDS 200000
#if defined(__x86_64__)
#define SPIN_HINT() __asm__ volatile("pause")
#elif defined(__aarch64__)
#define SPIN_HINT() __asm__ volatile("yield")
#else
#define SPIN_HINT() ((void)0)
#endif

static struct {
    pthread_mutex_t call_lock;  /* one parallel_for at a time */
    pthread_mutex_t sleep_lock;
    pthread_cond_t wake;
    int sleepers;               /* under sleep_lock */
    int started;                /* workers created (under call_lock) */

    /* the job: written by the caller before `open` is set */
    pg_task_fn fn;
    void *ctx;
    size_t n_tasks;
    int n_workers;              /* workers with index < n_workers take part */
    atomic_size_t next;
    atomic_int open;
    atomic_int in_job;
    atomic_uint gen;            /* bumped per job: what sleeping workers wait for */
} pool = {
    .call_lock = PTHREAD_MUTEX_INITIALIZER,
    .sleep_lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};

static atomic_int default_threads; /* 0 = not set: one per online core */

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > PG_MAX_THREADS ? PG_MAX_THREADS : (int)n);
}

pg_status pg_set_num_threads(int n)
{
    if (n < 0)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_set_num_threads: %d threads (0 = one per core)", n);
    atomic_store(&default_threads, n > PG_MAX_THREADS ? PG_MAX_THREADS : n);
    return PG_OK;
}

/* $PEREGRINE_NUM_THREADS, read once: the default of a process started
 * with it (a Dask worker of one thread), below pg_set_num_threads. */
static int env_threads(void)
{
    static atomic_int cached = -1;
    int v = atomic_load(&cached);
    if (v < 0) {
        const char *e = getenv("PEREGRINE_NUM_THREADS");
        char *end = NULL;
        long n = e && *e ? strtol(e, &end, 10) : 0;
        v = end && !*end && n > 0 ? (n > PG_MAX_THREADS ? PG_MAX_THREADS : (int)n) : 0;
        atomic_store(&cached, v);
    }
    return v;
}

int pg_get_num_threads(void)
{
    int n = atomic_load(&default_threads);
    if (n <= 0)
        n = env_threads();
    return n > 0 ? n : online_cores();
}

int pg_threads_resolve(int threads)
{
    if (threads <= 0)
        return pg_get_num_threads();
    return threads > PG_MAX_THREADS ? PG_MAX_THREADS : threads;
}

int pg_threads_for_work(int threads, double work, double per_thread)
{
    if (threads > 1 && work / per_thread < threads)
        threads = work < 2 * per_thread ? 1 : (int)(work / per_thread);
    return threads;
}

static void run_tasks(void)
{
    size_t n = pool.n_tasks, t;
    while ((t = atomic_fetch_add(&pool.next, 1)) < n)
        pool.fn(pool.ctx, t);
}

static void *worker_main(void *arg)
{
    int index = (int)(size_t)arg;
    unsigned seen = atomic_load(&pool.gen);
    for (;;) {
        unsigned g;
        int spins = 0;
        while ((g = atomic_load(&pool.gen)) == seen && ++spins < SPIN_ROUNDS)
            SPIN_HINT();
        if (g == seen) {
            pthread_mutex_lock(&pool.sleep_lock);
            pool.sleepers++;
            while ((g = atomic_load(&pool.gen)) == seen)
                pthread_cond_wait(&pool.wake, &pool.sleep_lock);
            pool.sleepers--;
            pthread_mutex_unlock(&pool.sleep_lock);
        }
        seen = g;
        atomic_fetch_add(&pool.in_job, 1);
        if (atomic_load(&pool.open) && index < pool.n_workers)
            run_tasks();
        atomic_fetch_sub(&pool.in_job, 1);
    }
    return NULL;
}

/* Create workers up to `want` (under call_lock); returns how many exist. */
static int ensure_workers(int want)
{
    while (pool.started < want) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker_main, (void *)(size_t)pool.started);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break;
        pool.started++;
    }
    return pool.started;
}

void pg_parallel_for(size_t n_tasks, pg_task_fn fn, void *ctx, int threads)
{
    if (n_tasks == 0)
        return;
    threads = pg_threads_resolve(threads);
    if ((size_t)threads > n_tasks)
        threads = (int)n_tasks;
    if (threads <= 1 || pthread_mutex_trylock(&pool.call_lock) != 0) {
        for (size_t t = 0; t < n_tasks; t++)
            fn(ctx, t);
        return;
    }
    int workers = ensure_workers(threads - 1);
    if (workers > threads - 1)
        workers = threads - 1;

    pool.fn = fn;
    pool.ctx = ctx;
    pool.n_tasks = n_tasks;
    pool.n_workers = workers;
    atomic_store(&pool.next, 0);
    atomic_store(&pool.open, 1);
    atomic_fetch_add(&pool.gen, 1);
    pthread_mutex_lock(&pool.sleep_lock);
    if (pool.sleepers)
        pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.sleep_lock);

    run_tasks();

    atomic_store(&pool.open, 0);
    for (int spins = 0; atomic_load(&pool.in_job) != 0; spins++)
        if (spins > SPIN_ROUNDS)
            sched_yield();
    pthread_mutex_unlock(&pool.call_lock);
}
