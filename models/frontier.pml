/*
 * Gossamer's shared frontier under seed 004's synchronisation strategies, with crawler threads
 * that both take URLs and put the links they find, and the protocol that ends the crawl.
 *
 * Where it sits in the data flow: seeds -> this frontier -> (fetch, parse) -> links back into
 * this frontier.  Each crawler thread loops: take a URL (blocking), crawl it, put each link it
 * finds.  A put never blocks: a link that does not fit (frontier full) stays in the thread's
 * own pending list and is put again before the thread's next take.  While that list is not
 * empty the thread only tries to take (it must not sleep holding links nobody else knows of),
 * so producers that are also consumers cannot deadlock.  A thread counts as busy from a take
 * until its next blocking take (it still holds a URL or pending links); the crawl ends when the
 * frontier is empty and no thread is busy: the frontier is closed and blocked takers released.
 * The frontier's seen-set drops URLs already admitted.
 *
 * STRATEGY selects the frontier (spin -DSTRATEGY=n -a models/frontier.pml):
 *   1 UNSYNC     seed 004's optimistic frontier: a ring with no lock (collisions expected)
 *   2 SEMAPHORE  a ring with full/empty counting semaphores and a mutex
 *   3 MONITOR    a ring inside one lock with a condition variable (not_empty)
 *   4 COARSE     a linked list (push and pop at the head, as seed 004) and its free-node
 *                chain under one lock, with a condition variable on that lock
 *   5 FINE       a two-lock linked queue with a dummy node: a head lock for takers, a tail
 *                lock for putters, an atomic counter for the capacity
 *
 * Checked: no invalid end state; the assertions "no URL crawled twice" and, at the end,
 * "every URL reachable from the seed was crawled"; LTL `terminates` (every crawler ends and
 * the crawl ends) under weak fairness.  SEMAPHORE, MONITOR and COARSE satisfy `terminates`
 * even with no fairness at all (no thread ever waits by spinning); FINE needs weak fairness,
 * because a thread with pending links retries at once while a taker is between its pop and
 * the counter's decrement.  Strategy 1 must fail: two takers get the same URL.
 *
 * Protocol variants kept as switches (the reason the protocol above has its shape):
 *   -DBLOCK_WITH_PENDING  a thread with pending links makes an ordinary (blocking) take, which
 *                         ends its busy spell: the crawl can close with links still pending
 *                         (an assertion fails)
 *   -DHAND_BACK_ROOM      (SEMAPHORE) it sleeps on P(empty) but gives the slot back for its
 *                         retry: such threads can pass the free slots among them for ever,
 *                         a cycle that weak fairness allows (`terminates` fails)
 *   -DPOLL_FOR_ROOM       (SEMAPHORE) a thread with pending links that finds no full permit
 *                         retries at once instead of sleeping on P(empty): a busy wait.  It
 *                         is not wrong under a fair scheduler: every taker holding a permit
 *                         is always able to go on, so weak fairness makes it free a slot and
 *                         `terminates` holds.  Without fairness Spin finds the cycle in which
 *                         the poller spins and the takers never run, which the protocol above
 *                         does not have.  The Python engine retries its held links this way
 *                         (before each timed take), so it too relies on a fair scheduler.
 */

#ifndef STRATEGY
#define STRATEGY 3
#endif
#define UNSYNC    1
#define SEMAPHORE 2
#define MONITOR   3
#define COARSE    4
#define FINE      5

#define NC    3          /* crawler threads */
#define CAP   2          /* frontier capacity */
#define U     5          /* URLs in the small web */
#define MAXL  3          /* links per page at most */
#define PMAX  4          /* a thread's pending list */
#define NIL   255

/* The small web: page u links to links[u*MAXL .. u*MAXL+nlinks[u]-1]; 0 is the seed. */
byte links[U * MAXL];
byte nlinks[U];

bit  seen[U];            /* the frontier's seen-set */
byte crawled[U];         /* how often each URL was taken and crawled */
byte busy;               /* threads holding a URL or pending links */
bit  closed;             /* the crawl is over; takers get nothing */
byte crawlers_done;
bit  ended;

/*
 * Critical sections.  A section that holds a lock, touches only data that lock guards, and
 * makes at most one access that others see outside the lock (a semaphore, the counter, a
 * pointer the other lock's side reads) can be one atomic step: no other thread can observe
 * or change its middle, so every interleaving it hides is equivalent to one it keeps (the
 * usual reduction argument).  The models use this throughout; a lock variable is kept only
 * where a thread holds it across a step of its own (a wait, or the fine queue's two steps).
 */
inline acquire(m) { atomic { m == 0 -> m = 1 } }

/* A condition variable with Mesa semantics: a wait releases the lock and needs a notify. */
typedef Cond { byte waiting; byte signals };
inline cv_wait(cv, m) {
  atomic { cv.waiting++; m = 0 };
  atomic { cv.signals > 0 -> cv.signals--; cv.waiting-- };
  acquire(m)
}
inline cv_notify(cv) { if :: cv.waiting > cv.signals -> cv.signals++ :: else -> skip fi }
inline cv_notify_all(cv) { cv.signals = cv.waiting }

/* A thread's last take found the frontier empty with no one busy: end the crawl. */
#define CAN_CLOSE (!closed && busy == 0)

#if STRATEGY == UNSYNC || STRATEGY == SEMAPHORE || STRATEGY == MONITOR
byte ring[CAP];
byte head, count;
inline ring_push(v) { ring[(head + count) % CAP] = v; count++ }
inline ring_pop(u)  { u = ring[head]; ring[head] = 0; head = (head + 1) % CAP; count-- }
#endif
#if STRATEGY == UNSYNC || STRATEGY == MONITOR
inline frontier_init(v) { seen[v] = 1; ring_push(v) }
#endif

/* ---------------------------------------------------------------------------------------- */
#if STRATEGY == UNSYNC
/* Every step reads or writes shared state on its own; only the end protocol is kept whole. */
inline try_put(v, ok) {
  if
  :: seen[v] -> ok = 1
  :: else ->
     c = count;
     if
     :: c >= CAP -> ok = 0
     :: else ->
        seen[v] = 1;
        ring[(head + c) % CAP] = v;      /* two putters may write the same slot */
        count = c + 1;                   /* and one increment may be lost */
        ok = 1
     fi
  fi;
  c = 0
}
inline pop_racy(u) {
  h = head;
  u = ring[h];                           /* two takers may read the same slot */
  head = (h + 1) % CAP;
  c = count;
  count = c - 1;
  h = 0; c = 0
}
inline take(u, got) {
  d_step { if :: mine -> busy--; mine = 0 :: else -> skip fi };
  if
  :: d_step { count > 0 && !closed -> busy++; mine = 1 }; pop_racy(u); got = 1
  :: d_step { count == 0 && CAN_CLOSE -> closed = 1 }; got = 0
  :: closed -> got = 0
  fi
}
inline try_take(u, got) {
  if
  :: count > 0 -> pop_racy(u); got = 1
  :: else -> got = 0
  fi
}
#endif

/* ---------------------------------------------------------------------------------------- */
#if STRATEGY == SEMAPHORE
/* full and empty count the ring's used and free slots; the mutex is the d_steps. */
byte full_slots = 0;
byte empty_slots = CAP;
inline frontier_init(v) { seen[v] = 1; ring_push(v); full_slots = 1; empty_slots = CAP - 1 }
inline try_put(v, ok) {
  d_step {                                /* mutex: seen-set, a free slot if any, the push */
    if
    :: seen[v] -> ok = 1; t = 0
    :: !seen[v] && empty_slots > 0 -> empty_slots--; seen[v] = 1; ring_push(v); t = 1
    :: !seen[v] && empty_slots == 0 -> ok = 0; t = 0   /* never blocks */
    fi
  };
  if
  :: t -> full_slots++; ok = 1            /* V(full) */
  :: else -> skip
  fi;
  t = 0
}
inline take(u, got) {
  d_step {                                /* mutex: the end protocol */
    if :: mine -> busy--; mine = 0 :: else -> skip fi;
    if :: count == 0 && CAN_CLOSE -> closed = 1; full_slots++ :: else -> skip fi  /* wake one */
  };
  atomic { full_slots > 0 -> full_slots-- };           /* P(full) */
  d_step {                                /* mutex */
    if
    :: closed && count == 0 -> got = 0; full_slots++    /* pass the wake-up on */
    :: else -> ring_pop(u); busy++; mine = 1; got = 1
    fi
  };
  if :: got -> empty_slots++ :: else -> skip fi        /* V(empty) */
}
/* A thread holding pending links that did not fit takes a URL if a permit is free.  If none
 * is, every URL in the ring has been claimed by a taker that will give its slot back, so the
 * thread sleeps on P(empty) and puts its first pending link in the slot it gets. */
inline try_take(u, got) {
  d_step { if :: full_slots > 0 -> full_slots--; t = 1 :: else -> t = 0 fi };
  if
  :: t ->
     d_step { assert(!closed); ring_pop(u) };          /* mutex */
     empty_slots++;
     got = 1
  :: else ->
#if defined(POLL_FOR_ROOM)
     got = 0                                           /* busy wait: the caller loops at once */
#elif defined(HAND_BACK_ROOM)
     atomic { empty_slots > 0 -> empty_slots-- };     /* mistake: wait for room, give it back */
     empty_slots++;
     got = 0
#else
     atomic { empty_slots > 0 -> empty_slots-- };     /* P(empty): wait for room */
     d_step {                                          /* mutex: place the first pending link */
       v = pending[0];
       if :: seen[v] -> t = 0 :: else -> seen[v] = 1; ring_push(v); t = 1 fi
     };
     if
     :: t -> full_slots++                              /* V(full) */
     :: else -> empty_slots++                          /* admitted meanwhile: slot unused */
     fi;
     d_step {                                          /* the link is placed: drop it */
       i = 1;
       do
       :: i < npend -> pending[i - 1] = pending[i]; i++
       :: else -> break
       od;
       npend--; pending[npend] = 0; i = 0; v = 0
     };
     got = 0
#endif
  fi;
  t = 0
}
#endif

/* ---------------------------------------------------------------------------------------- */
#if STRATEGY == MONITOR
bit  mon;                                /* held only by a taker deciding whether to wait */
Cond not_empty;
inline try_put(v, ok) {
  d_step {
    mon == 0 ->
    if
    :: seen[v] -> ok = 1
    :: !seen[v] && count == CAP -> ok = 0
    :: !seen[v] && count < CAP -> seen[v] = 1; ring_push(v); cv_notify(not_empty); ok = 1
    fi
  }
}
inline take(u, got) {
  atomic { mon == 0 -> mon = 1; if :: mine -> busy--; mine = 0 :: else -> skip fi };
  do
  :: d_step { count > 0 -> ring_pop(u); busy++; mine = 1; got = 1; mon = 0 }; break
  :: d_step { count == 0 && closed -> got = 0; mon = 0 }; break
  :: d_step { count == 0 && CAN_CLOSE -> closed = 1; cv_notify_all(not_empty); got = 0; mon = 0 };
     break
  :: count == 0 && !closed && busy > 0 -> cv_wait(not_empty, mon)
  od
}
inline try_take(u, got) {
  d_step { mon == 0 -> if :: count > 0 -> ring_pop(u); got = 1 :: else -> got = 0 fi }
}
#endif

/* ---------------------------------------------------------------------------------------- */
#if STRATEGY == COARSE
/* Nodes 0..CAP-1; top is the list's head; unused nodes are chained from free_top.  Every
 * access to the list is made with biglock held. */
byte val[CAP];
byte nxt[CAP];
byte top = NIL;
byte free_top = 0;
bit  biglock;
Cond not_empty;
inline frontier_init(v) {
  nxt[0] = 1; nxt[1] = NIL;              /* the free chain: 0 -> 1 (CAP is 2) */
  seen[v] = 1;
  n = free_top; free_top = nxt[n]; val[n] = v; nxt[n] = top; top = n; n = 0
}
inline try_put(v, ok) {
  d_step {
    biglock == 0 ->
    if
    :: seen[v] -> ok = 1
    :: !seen[v] && free_top == NIL -> ok = 0
    :: !seen[v] && free_top != NIL ->
       seen[v] = 1;
       n = free_top;                      /* take a node off the free chain */
       free_top = nxt[n];
       val[n] = v;
       nxt[n] = top;                      /* and push it at the head */
       top = n;
       n = 0;
       cv_notify(not_empty);
       ok = 1
    fi
  }
}
inline list_pop(u) {
  n = top;
  u = val[n];
  top = nxt[n];
  nxt[n] = free_top;                     /* the node goes back on the free chain */
  free_top = n;
  n = 0
}
inline take(u, got) {
  atomic { biglock == 0 -> biglock = 1; if :: mine -> busy--; mine = 0 :: else -> skip fi };
  do
  :: d_step { top != NIL -> list_pop(u); busy++; mine = 1; got = 1; biglock = 0 }; break
  :: d_step { top == NIL && closed -> got = 0; biglock = 0 }; break
  :: d_step { top == NIL && CAN_CLOSE -> closed = 1; cv_notify_all(not_empty); got = 0;
              biglock = 0 }; break
  :: top == NIL && !closed && busy > 0 -> cv_wait(not_empty, biglock)
  od
}
inline try_take(u, got) {
  d_step { biglock == 0 -> if :: top != NIL -> list_pop(u); got = 1 :: else -> got = 0 fi }
}
#endif

/* ---------------------------------------------------------------------------------------- */
#if STRATEGY == FINE
/* Nodes 0..CAP in a ring; the live ones run from the dummy qhead to qtail.  qhead, busy and
 * closed belong to the head lock; qtail and the seen-set to the tail lock; the two sides meet
 * only at the dummy's next pointer (when the queue is empty) and at the counter. */
#define NN (CAP + 1)
byte val[NN];
byte nxt[NN];
byte qhead, qtail;
byte count;                              /* the capacity counter, changed atomically */
bit  hlock, tlock;
Cond not_empty;                          /* waited on under hlock */
inline frontier_init(v) {
  nxt[0] = NIL; nxt[1] = NIL; nxt[2] = NIL;
  seen[v] = 1; count = 1;
  val[1] = v; nxt[0] = 1; qtail = 1
}
inline try_put(v, ok) {
  atomic {                                /* take the tail lock: seen-set, reserve a place */
    tlock == 0 ->
    if
    :: seen[v] -> ok = 1; t = 0
    :: !seen[v] && count < CAP -> count++; t = 1; tlock = 1    /* keep the lock */
    :: !seen[v] && count == CAP -> ok = 0; t = 0
    fi
  };
  if
  :: t ->
     d_step {                             /* still holding it: fill a node, link it, let go */
       seen[v] = 1;
       n = (qtail + 1) % NN;
       assert(n != qhead);                /* not the dummy a taker may be reading */
       val[n] = v;
       nxt[n] = NIL;
       nxt[qtail] = n;                    /* linked: a taker can see it from here */
       qtail = n;
       n = 0;
       tlock = 0
     };
     d_step { hlock == 0 -> cv_notify(not_empty) };   /* tell a waiting taker, under hlock */
     ok = 1
  :: else -> skip
  fi;
  t = 0
}
/* With hlock held; val[n] was written before n was linked and stays until n is freed. */
inline queue_pop(u) { n = nxt[qhead]; u = val[n]; qhead = n; n = 0 }
inline take(u, got) {
  atomic { hlock == 0 -> hlock = 1; if :: mine -> busy--; mine = 0 :: else -> skip fi };
  do
  :: d_step { nxt[qhead] != NIL -> queue_pop(u); busy++; mine = 1; got = 1; hlock = 0 }; break
  :: d_step { nxt[qhead] == NIL && closed -> got = 0; hlock = 0 }; break
  :: d_step { nxt[qhead] == NIL && CAN_CLOSE -> closed = 1; cv_notify_all(not_empty); got = 0;
              hlock = 0 }; break
  :: nxt[qhead] == NIL && !closed && busy > 0 -> cv_wait(not_empty, hlock)
  od;
  if :: got -> count-- :: else -> skip fi              /* the place is free only now */
}
inline try_take(u, got) {
  d_step { hlock == 0 -> if :: nxt[qhead] != NIL -> queue_pop(u); got = 1 :: else -> got = 0 fi };
  if :: got -> count-- :: else -> skip fi
}
#endif

/* ---------------------------------------------------------------------------------------- */
/* Crawl u: count it, then put each link, keeping the ones that do not fit. */
inline crawl(u) {
  d_step { crawled[u]++; assert(crawled[u] == 1) };       /* no URL crawled twice */
  i = 0;
  do
  :: i < nlinks[u] ->
     v = links[u * MAXL + i];
     try_put(v, ok);
     if
     :: !ok -> assert(npend < PMAX); pending[npend] = v; npend++
     :: else -> skip
     fi;
     i++
  :: else -> break
  od;
  atomic { i = 0; v = 0; u = 0; ok = 0 }
}

/* Put the pending links again; the ones that still do not fit stay, in order. */
inline retry_pending() {
  i = 0; j = 0;
  do
  :: i < npend ->
     v = pending[i];
     try_put(v, ok);
     if
     :: !ok -> pending[j] = v; j++
     :: else -> skip
     fi;
     i++
  :: else -> break
  od;
  atomic {
    npend = j;
    do
    :: j < PMAX -> pending[j] = 0; j++
    :: else -> break
    od;
    i = 0; j = 0; v = 0; ok = 0
  }
}

proctype Crawler(byte id) {
  byte u, v, i, j, n, c, h;
  byte pending[PMAX];
  byte npend;
  bit got, mine, ok, t;
  do
  :: if
     :: npend > 0 ->
        retry_pending();
        if
#ifdef BLOCK_WITH_PENDING
        :: npend > 0 ->
           take(u, got);                /* mistake: may sleep, and stops counting as busy */
           if
           :: got -> skip
           :: else -> break
           fi
#else
        :: npend > 0 -> try_take(u, got) /* busy already: take only if there is something */
#endif
        :: else -> skip
        fi
     :: npend == 0 ->
        take(u, got);
        if
        :: got -> skip
        :: else -> break                 /* closed: the crawl is over */
        fi
     fi;
     if
     :: got -> got = 0; crawl(u)
     :: else -> skip
     fi
  od;
  crawlers_done++
}

init {
  byte n, u;
  d_step {
    /* 0 -> 1 2 3;  1 -> 2 4 3;  2 -> 4;  3, 4 -> (none) */
    links[0] = 1; links[1] = 2; links[2] = 3; nlinks[0] = 3;
    links[3] = 2; links[4] = 4; links[5] = 3; nlinks[1] = 3;
    links[6] = 4; nlinks[2] = 1;
    frontier_init(0)
  };
  atomic { run Crawler(0); run Crawler(1); run Crawler(2) };
  crawlers_done == NC;
  d_step {
    u = 0;
    do
    :: u < U -> assert(crawled[u] != 0); u++     /* every reachable URL was crawled */
    :: else -> break
    od;
    u = 0
  };
  ended = 1
}

ltl terminates { <> (ended && crawlers_done == NC) }
