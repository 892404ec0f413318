/*
 * Gossamer's seed-000 pipeline: crawler threads -> bounded buffers -> index builders ->
 * the Indexed URL Tree, with the statistics thread and the cleaner.
 *
 * Where it sits in the data flow: after a crawler has fetched a page, the page's tree
 * record goes into the crawler's buffer (two crawlers share each buffer); the buffer's
 * builder files the records into the tree, one file per tree path, under a per-path lock
 * with a check before and after taking it.  When every crawler has ended, the builders
 * are interrupted between iterations and joined, and the cleaner files what is left.
 *
 * The frontier that hands out work is abstracted to one atomic step here (models/frontier.pml
 * checks the strategies themselves).  What matters for the tree is that records with the same
 * tree path can reach different buffers: W work items, whose tree paths (key_of) repeat.
 *
 * Checked (see models/README.md for the commands and the figures):
 *   - no invalid end state: every thread reaches its end (the statistics thread can always
 *     take a step, so a deadlock among the others shows up in the liveness check instead,
 *     as a fair cycle);
 *   - assertions: no tree file created twice, no data line written twice, no buffer holds
 *     more than SIZE records, a builder drains exactly a full buffer, the statistics thread
 *     never reads more files than records handed out, and at the end every path is in the
 *     tree once and the buffers are empty;
 *   - LTL `terminates`: every crawler and builder ends and the system ends (weak fairness).
 *
 * -DSHOW_DATARACE removes the tree's per-path lock (the two checks stay): Spin then finds
 * two builders creating the same file (models/trails/pipeline-datarace.txt).
 */

#define NB     2              /* buffers, one builder each */
#define CPB    2              /* crawlers per buffer, as in the seed */
#define NC     (NB * CPB)     /* crawler threads */
#define SIZE   2              /* buffer capacity: crawler permits per buffer */
#define W      4              /* work items the frontier hands out */
#define NKEYS  2              /* distinct tree paths among them */
#define NONE   255

byte key_of[W];               /* the tree path of each work item */
byte next_item;               /* the abstract frontier: next item to hand out */

/*
 * Per buffer: the seed's two semaphores, and a mutex between the threads that touch the list.
 * Every read and write of a buffer's list happens with its mutex held, so nothing outside can
 * see the middle of a critical section: each one (a crawler's append, a builder's or the
 * cleaner's drain) is a single atomic step here, which is what the mutex buys.
 */
byte crawler_sem[NB];         /* starts at SIZE */
byte builder_sem[NB];         /* starts at 0 */
typedef Buffer { byte item[SIZE]; byte count };
Buffer buffer[NB];

/* The Indexed URL Tree, one entry per path. */
bit  exists[NKEYS];           /* the path's file is there */
byte lines[NKEYS];            /* data lines written to it */
bit  path_lock[NKEYS];        /* the tree's per-path lock */
byte filed;                   /* files created, the figure the statistics thread reads */

/* The main thread's joins and the shutdown flags. */
byte crawlers_done, builders_done;
bit  interrupted, cleaner_done, stop_stats, stats_done, ended;

inline acquire(m) { atomic { m == 0 -> m = 1 } }
inline release(m) { m = 0 }

#ifdef SHOW_DATARACE
inline lock_path(k)   { skip }
inline unlock_path(k) { skip }
#else
inline lock_path(k)   { acquire(path_lock[k]) }
inline unlock_path(k) { release(path_lock[k]) }
#endif

/* The tree's add: check, lock the path, check again, create the file, write its line. */
inline file_into_tree(k) {
  if
  :: exists[k] -> skip
  :: else ->
     lock_path(k);
     if
     :: exists[k] -> skip
     :: else ->
        d_step { assert(!exists[k]); exists[k] = 1; filed++ };   /* no file created twice */
        lines[k]++;
        assert(lines[k] == 1)                                    /* no data line written twice */
     fi;
     unlock_path(k)
  fi
}

proctype Crawler(byte c) {
  byte b = c / CPB;
  byte u, n;
  do
  :: d_step {                                 /* take the next item, or learn there is none */
       if
       :: next_item < W -> u = next_item; next_item++
       :: else -> u = NONE
       fi
     };
     if
     :: u == NONE -> break
     :: else
     fi;
     /* (the page is fetched and parsed here) then its record goes into buffer b */
     atomic { crawler_sem[b] > 0 -> crawler_sem[b]-- };
     d_step {                                  /* under the buffer's mutex */
       n = buffer[b].count;
       assert(n < SIZE);                       /* the permits keep the buffer within SIZE */
       buffer[b].item[n] = key_of[u];
       buffer[b].count = n + 1;
       u = 0; n = 0
     };
     builder_sem[b]++
  od;
  crawlers_done++
}

proctype Builder(byte b) {
  byte got[SIZE];
  byte i, k;
  do
  :: atomic { builder_sem[b] >= SIZE -> builder_sem[b] = builder_sem[b] - SIZE };
     d_step {                                  /* under the buffer's mutex */
       assert(buffer[b].count == SIZE);        /* holding every permit: the buffer is full */
       i = 0;
       do
       :: i < SIZE -> got[i] = buffer[b].item[i]; buffer[b].item[i] = 0; i++
       :: else -> break
       od;
       buffer[b].count = 0; i = 0
     };
     do
     :: i < SIZE -> k = got[i]; file_into_tree(k); i++
     :: else -> break
     od;
     atomic {                                  /* hand the permits back to the crawlers */
       crawler_sem[b] = crawler_sem[b] + SIZE;
       i = 0; k = 0; got[0] = 0; got[1] = 0
     }
  :: interrupted -> break                      /* only between iterations */
  od;
  builders_done++
}

/* Runs after the builders have joined: files whatever the buffers still hold. */
proctype Cleaner() {
  byte got[SIZE];
  byte b, i, n, k;
  do
  :: b < NB ->
     d_step {                                  /* under the buffer's mutex */
       n = buffer[b].count;
       i = 0;
       do
       :: i < n -> got[i] = buffer[b].item[i]; buffer[b].item[i] = 0; i++
       :: else -> break
       od;
       buffer[b].count = 0; i = 0
     };
     do
     :: i < n -> k = got[i]; file_into_tree(k); i++
     :: else -> break
     od;
     b++
  :: else -> break
  od;
  cleaner_done = 1
}

/* Reads the figures now and then; must never block anyone, and ends when told. */
proctype Stats() {
  do
  :: stop_stats -> break
  :: d_step { !stop_stats; assert(filed <= next_item && filed <= NKEYS) }
  od;
  stats_done = 1
}

init {
  byte b, k;
  d_step {
    key_of[0] = 0; key_of[1] = 0; key_of[2] = 1; key_of[3] = 1;
    b = 0;
    do
    :: b < NB -> crawler_sem[b] = SIZE; b++
    :: else -> break
    od;
    b = 0
  };
  atomic {
    run Stats();
    run Builder(0); run Builder(1);
    run Crawler(0); run Crawler(1); run Crawler(2); run Crawler(3)
  };
  crawlers_done == NC;         /* join the crawlers */
  interrupted = 1;             /* interrupt the builders after their current iteration */
  builders_done == NB;         /* join the builders */
  run Cleaner();
  cleaner_done == 1;
  stop_stats = 1;
  stats_done == 1;
  d_step {                     /* the end result: every path once, nothing left behind */
    k = 0;
    do
    :: k < NKEYS -> assert(exists[k] && lines[k] == 1); k++
    :: else -> break
    od;
    b = 0;
    do
    :: b < NB -> assert(buffer[b].count == 0); b++
    :: else -> break
    od
  };
  ended = 1
}

ltl terminates { <> (ended && crawlers_done == NC && builders_done == NB) }
