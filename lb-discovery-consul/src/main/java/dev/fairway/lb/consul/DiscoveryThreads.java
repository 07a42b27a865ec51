package dev.fairway.lb.consul;

import java.lang.System.Logger.Level;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads of one {@link ConsulDiscovery}: the loop thread {@code fairway-consul-<name>} that runs
 * every watch step (as a {@link WatchSteps.Scheduler}), and the HTTP workers
 * {@code fairway-consul-<name>-http-<n>} handed to the JDK HTTP client. All daemons; the workers time
 * out when idle. Thread-safe.
 */
final class DiscoveryThreads implements WatchSteps.Scheduler {
  private static final System.Logger LOG = System.getLogger(ConsulDiscovery.class.getName());

  private final String loopName;
  private final ScheduledThreadPoolExecutor loop;
  private final ThreadPoolExecutor http;

  DiscoveryThreads(String name, int httpThreads) {
    this.loopName = "fairway-consul-" + name;
    this.loop = new ScheduledThreadPoolExecutor(1, new NamedDaemons(loopName, false));
    this.loop.setRemoveOnCancelPolicy(true); // cancelled waits (close) do not linger for minutes
    this.http = new ThreadPoolExecutor(httpThreads, httpThreads, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), new NamedDaemons(loopName + "-http", true));
    this.http.allowCoreThreadTimeOut(true);
  }

  /** Where the HTTP client runs its callbacks. */
  Executor httpExecutor() {
    return http;
  }

  @Override
  public Future<?> schedule(Runnable task, long delayNanos) {
    return loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void execute(Runnable task) {
    loop.execute(task);
  }

  /**
   * Stops both pools; waits up to 1 s for each unless called on the loop thread itself (a listener
   * that closes the discovery), which could never see itself end.
   */
  void shutdown() {
    loop.shutdownNow();
    http.shutdown();
    if (Thread.currentThread().getName().equals(loopName)) {
      return;
    }
    try {
      if (!loop.awaitTermination(1, TimeUnit.SECONDS) || !http.awaitTermination(1, TimeUnit.SECONDS)) {
        LOG.log(Level.WARNING, "Consul discovery threads did not stop within 1 s");
        http.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static final class NamedDaemons implements ThreadFactory {
    private final String prefix;
    private final boolean numbered;
    private final AtomicInteger n = new AtomicInteger();

    NamedDaemons(String prefix, boolean numbered) {
      this.prefix = prefix;
      this.numbered = numbered;
    }

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new Thread(r, numbered ? prefix + "-" + n.getAndIncrement() : prefix);
      t.setDaemon(true);
      return t;
    }
  }
}
