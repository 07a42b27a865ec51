package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.internal.AttemptBudget;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * What a client's services share to hedge: the policy, the timer that fires hedges, the threads
 * that run them, and the clock. One per client (lb-okhttp's interceptor, lb-jdk-httpclient's
 * client), built only when hedging is configured; each service gets its own {@link ServiceHedging}
 * from it, which makes every hedging decision.
 *
 * <p>The first copy of a call is the client's business (OkHttp runs it on the caller's thread, the
 * JDK client as an async exchange); only a hedge needs a thread of its own, since picking its
 * target and, for OkHttp, {@code Call.execute()} may block. Hedges run on a pool of daemon threads
 * (at most {@value #MAX_THREADS}, idle ones end after 30 s; a hedge that finds none free is not
 * sent) rather than on a client's own executor, whose limits are shared with the calls the hedges
 * would be waiting for. The timer ({@link HedgeTimer}) is one daemon thread; arming it costs a
 * hedgeable call one compare-and-set and no allocation.
 */
public final class Hedger {
  public static final int MAX_THREADS = 256;

  /**
   * Fires races' hedge timers: {@link HedgeTimer#SHARED} in production, the seam tests replace to
   * fire hedges by hand.
   */
  public interface Scheduler {
    /** Calls {@code node.run()} after {@code delayNanos}, unless {@link #disarm} came first. */
    void arm(TimerNode node, long delayNanos);

    /** The node no longer wants to fire (its state already says so); called at most once, after arm. */
    void disarm(TimerNode node);

    /**
     * Calls {@link ServiceHedging#tick} on every tick until it holds nothing, so a hold ends on time
     * though no call comes; the timer then calls {@link ServiceHedging#unwatched}. Called when
     * {@code hedging} holds a copy and is not watched. A scheduler without ticks (tests that fire
     * hedges by hand) does nothing: holds then end when calls come.
     */
    default void watch(ServiceHedging hedging) {}
  }

  public final HedgingPolicy policy;
  private final Scheduler scheduler;
  private final Executor pool;
  private final LongSupplier ticker;

  public Hedger(HedgingPolicy policy, Scheduler scheduler, Executor pool, LongSupplier ticker) {
    this.policy = policy;
    this.scheduler = scheduler;
    this.pool = pool;
    this.ticker = ticker;
  }

  /** With the shared timer thread and hedge pool. */
  public static Hedger create(HedgingPolicy policy, LongSupplier ticker) {
    return new Hedger(policy, HedgeTimer.SHARED, Shared.POOL, ticker);
  }

  /** The hedging of one service, whose route's budget {@code retries} hedges draw on too. */
  public ServiceHedging forService(String host, LoadBalancer loadBalancer, HedgeMeters metrics, AttemptBudget retries) {
    return new ServiceHedging(host, policy, loadBalancer, metrics, retries, scheduler, pool, ticker);
  }

  /**
   * One hedge pool for every client in the JVM, made on first use: an application with many
   * clients then holds at most {@value #MAX_THREADS} hedge threads in all, and none once it is
   * idle. An interceptor has no close, so nothing of its own could stop them.
   */
  private static final class Shared {
    static final ThreadPoolExecutor POOL = new ThreadPoolExecutor(
        0, MAX_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), daemon("fairway-hedge-"));

    private Shared() {}
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix.endsWith("-") ? prefix + count.incrementAndGet() : prefix);
      thread.setDaemon(true);
      return thread;
    };
  }
}
