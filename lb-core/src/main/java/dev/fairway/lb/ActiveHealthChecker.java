package dev.fairway.lb;

import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Runs one balancer's {@link ActiveHealth} probes: a single scheduler thread starts a round every
 * interval (± jitter) and enforces timeouts; probes run on a small pool (up to 8 threads) so a hung
 * probe cannot delay the others. All threads are daemons named {@code fairway-health-<service>} and
 * end with {@link #close()}.
 *
 * <p>A probe's timeout starts when the probe starts running, not when it is queued, so targets
 * waiting behind slow probes are probed rather than failed. A target whose previous probe is still
 * queued or running is skipped for the round, which bounds the queue by the number of targets; the
 * queue itself is bounded too ({@value #MAX_QUEUED}), and a probe that does not fit waits for the
 * next round. A finished probe cancels its timeout, which the scheduler then drops at once.
 */
final class ActiveHealthChecker {
  static final int THREADS = 8;
  static final int MAX_QUEUED = 1024;
  private static final System.Logger LOG = System.getLogger(ActiveHealthChecker.class.getName());

  private final String service;
  private final ActiveHealth config;
  private final Supplier<TrackedTarget[]> members;
  private final BiConsumer<TrackedTarget, Boolean> probed;
  private final ScheduledThreadPoolExecutor scheduler;
  private final ThreadPoolExecutor probes;
  /** Targets with a probe queued or running. */
  private final Set<TrackedTarget> pending = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private ActiveHealthChecker(String service, ActiveHealth config, Supplier<TrackedTarget[]> members,
      BiConsumer<TrackedTarget, Boolean> probed) {
    this.service = service;
    this.config = config;
    this.members = members;
    this.probed = probed;
    ThreadFactory threads = daemonThreads("fairway-health-" + service);
    this.scheduler = new ScheduledThreadPoolExecutor(1, threads);
    this.scheduler.setRemoveOnCancelPolicy(true);
    this.probes = new ThreadPoolExecutor(THREADS, THREADS, 10, TimeUnit.SECONDS, new ArrayBlockingQueue<>(MAX_QUEUED),
        threads);
    this.probes.allowCoreThreadTimeOut(true);
  }

  /** Starts probing the targets {@code members} returns; {@code probed} hears every verdict. */
  static ActiveHealthChecker start(String service, ActiveHealth config, Supplier<TrackedTarget[]> members,
      BiConsumer<TrackedTarget, Boolean> probed) {
    ActiveHealthChecker checker = new ActiveHealthChecker(service, config, members, probed);
    checker.scheduleRound(checker.jittered(config.interval.toNanos()) / 2);
    return checker;
  }

  private void scheduleRound(long delayNanos) {
    if (!closed) {
      // round() logs its own failures and schedules the next round; the future has nothing to add.
      ScheduledFuture<?> unused = scheduler.schedule(this::round, delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  private long jittered(long nanos) {
    long spread = (long) (nanos * config.jitter);
    return spread == 0 ? nanos : nanos - spread + ThreadLocalRandom.current().nextLong(2 * spread + 1);
  }

  private void round() {
    try {
      for (TrackedTarget t : members.get()) {
        if (pending.add(t)) {
          probe(t);
        }
      }
    } catch (RuntimeException e) {
      if (!closed) {
        LOG.log(System.Logger.Level.WARNING, service + ": health round failed", e);
      }
    } finally {
      scheduleRound(jittered(config.interval.toNanos()));
    }
  }

  private void probe(TrackedTarget t) {
    AtomicBoolean reported = new AtomicBoolean();
    FutureTask<?>[] self = new FutureTask<?>[1];
    FutureTask<Void> task = new FutureTask<>(() -> {
      // The timeout counts from here, when the probe runs; it interrupts only this task.
      ScheduledFuture<?> timeout = scheduler.schedule(() -> {
        if (reported.compareAndSet(false, true)) {
          self[0].cancel(true);
          report(t, false); // a probe past its timeout is a failed check
        }
      }, config.timeout.toNanos(), TimeUnit.NANOSECONDS);
      boolean healthy;
      try {
        healthy = config.probe.check(t.target);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      } catch (Exception | LinkageError e) {
        healthy = false;
      } finally {
        timeout.cancel(false);
      }
      if (reported.compareAndSet(false, true)) {
        report(t, healthy);
      }
      return null;
    }) {
      @Override
      protected void done() {
        if (isCancelled() && reported.compareAndSet(false, true)) {
          pending.remove(t); // cancelled before it ran (the balancer closed)
        }
      }
    };
    self[0] = task;
    try {
      probes.execute(task);
    } catch (RejectedExecutionException e) {
      pending.remove(t);
      if (!closed) {
        LOG.log(System.Logger.Level.DEBUG, "{0}: probe queue full; {1} waits for the next round", service, t.target.id());
      }
    }
  }

  private void report(TrackedTarget t, boolean healthy) {
    pending.remove(t);
    if (!closed) {
      probed.accept(t, healthy);
    }
  }

  void close() {
    closed = true;
    scheduler.shutdownNow();
    probes.shutdownNow();
    try {
      scheduler.awaitTermination(2, TimeUnit.SECONDS);
      probes.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static ThreadFactory daemonThreads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
