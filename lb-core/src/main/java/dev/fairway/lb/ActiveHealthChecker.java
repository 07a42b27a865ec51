package dev.fairway.lb;

import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs one balancer's {@link ActiveHealth} probes: a single scheduler thread starts a round every
 * interval (± jitter) and enforces timeouts; probes run on a small pool (up to 8 threads) so a hung
 * probe cannot delay the others. All threads are daemons named {@code fairway-health-<service>} and
 * end with {@link #close()}.
 */
final class ActiveHealthChecker {
  interface Listener {
    TrackedTarget[] members();

    void probed(TrackedTarget target, boolean healthy);
  }

  private static final System.Logger LOG = System.getLogger(ActiveHealthChecker.class.getName());

  private final ActiveHealth config;
  private final Listener listener;
  private final ScheduledThreadPoolExecutor scheduler;
  private final ThreadPoolExecutor probes;
  private volatile boolean closed;

  ActiveHealthChecker(String service, ActiveHealth config, Listener listener) {
    this.config = config;
    this.listener = listener;
    ThreadFactory threads = daemonThreads("fairway-health-" + service);
    this.scheduler = new ScheduledThreadPoolExecutor(1, threads);
    this.scheduler.setRemoveOnCancelPolicy(true);
    this.probes = new ThreadPoolExecutor(8, 8, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads);
    this.probes.allowCoreThreadTimeOut(true);
  }

  void start() {
    scheduleRound(jittered(config.interval.toNanos()) / 2);
  }

  private void scheduleRound(long delayNanos) {
    if (!closed) {
      scheduler.schedule(this::round, delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  private long jittered(long nanos) {
    long spread = (long) (nanos * config.jitter);
    return spread == 0 ? nanos : nanos - spread + ThreadLocalRandom.current().nextLong(2 * spread + 1);
  }

  private void round() {
    try {
      for (TrackedTarget t : listener.members()) {
        probe(t);
      }
    } catch (RuntimeException e) {
      if (!closed) {
        LOG.log(System.Logger.Level.WARNING, "health round failed", e);
      }
    } finally {
      scheduleRound(jittered(config.interval.toNanos()));
    }
  }

  private void probe(TrackedTarget t) {
    AtomicBoolean reported = new AtomicBoolean();
    Future<?> running =
        probes.submit(
            () -> {
              boolean healthy;
              try {
                healthy = config.probe.check(t.target);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
              } catch (Exception | LinkageError e) {
                healthy = false;
              }
              if (reported.compareAndSet(false, true)) {
                listener.probed(t, healthy);
              }
            });
    scheduler.schedule(
        () -> {
          if (!running.isDone() && reported.compareAndSet(false, true)) {
            running.cancel(true);
            listener.probed(t, false); // a probe past its timeout is a failed check
          }
        },
        config.timeout.toNanos(),
        TimeUnit.NANOSECONDS);
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
