package dev.fairway.lb.okhttp;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.Closer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import mockwebserver3.MockResponse;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hedged paths a review found unguarded (issue 26, item 4): a non-I/O throwable on either copy,
 * an application interceptor holding a lock across {@code proceed()}, a hedge that really failed
 * just before it was cancelled, both copies answering at once, and a full hedge pool. The hedge
 * timer is held by hand (it fires when the test says), so every order below is exact; real time
 * only bounds the waits.
 */
class HedgeGuardsTest {
  // These tests are about the race; a loser's held slot (HeldLosers) has tests of its own.
  private static final Duration NO_HOLD = Duration.ZERO;

  private final Closer closer = new Closer();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ExecutorService hedgePool = Executors.newCachedThreadPool();
  private final ExecutorService callers = Executors.newCachedThreadPool();

  /** The armed hedge timer, if any: fired by {@link #fireHedge}, cleared by the race's disarm. */
  private final AtomicReference<Runnable> heldHedge = new AtomicReference<>();
  private final Hedger.Scheduler held = new Hedger.Scheduler() {
    @Override
    public void arm(TimerNode task, long delayNanos) {
      heldHedge.set(task);
    }

    @Override
    public void disarm(TimerNode task) {
      heldHedge.compareAndSet(task, null);
    }
  };

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
    hedgePool.shutdownNow();
    callers.shutdownNow();
  }

  /** The timer's delay passed: the hedge is sent (from the hedge pool). */
  private void fireHedge() {
    Runnable hedge = heldHedge.getAndSet(null);
    if (hedge != null) {
      hedge.run();
    }
  }

  private LoadBalancer balancer(Backends b) {
    return closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build());
  }

  private LoadBalancingInterceptor.Builder interceptor(LoadBalancer lb) {
    return LoadBalancingInterceptor.builder().service("orders", lb).hedgeScheduler(held, hedgePool)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(NO_HOLD));
  }

  /** A client with {@code before}, then the balancing interceptor, then {@code after} (either may be null). */
  private static OkHttpClient client(Backends b, Interceptor before, LoadBalancingInterceptor lbi, Interceptor after) {
    OkHttpClient.Builder builder = b.client(null).newBuilder();
    if (before != null) {
      builder.addInterceptor(before);
    }
    builder.addInterceptor(lbi);
    if (after != null) {
      builder.addInterceptor(after);
    }
    return builder.build();
  }

  private CompletableFuture<Response> callAsync(OkHttpClient client) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return client.newCall(new Request.Builder().url("http://orders/x").build()).execute();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }, callers);
  }

  private double hedges(String result) {
    Counter counter = registry.find("fairway.hedges").tag("result", result).counter();
    return counter == null ? 0 : counter.count();
  }

  private long attempts(Backends b, int server, String outcome) {
    Timer timer = registry.find("fairway.requests").tag("target", b.target(server).id()).tag("outcome", outcome).timer();
    return timer == null ? 0 : timer.count();
  }

  private static void await(CountDownLatch latch, String what) {
    try {
      assertThat(latch.await(5, TimeUnit.SECONDS)).as(what).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }


  private static boolean noneInFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum() == 0;
  }

  private static int server(Backends b, Response response) {
    return response.request().url().port() == b.port(0) ? 0 : 1;
  }

  /** Collects what the interceptor logs at {@code level} or above, until the test ends. */
  private List<LogRecord> logged(Level level) {
    List<LogRecord> records = new CopyOnWriteArrayList<>();
    Logger log = Logger.getLogger(LoadBalancingInterceptor.class.getName());
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= level.intValue()) {
          records.add(record);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    log.addHandler(handler);
    closer.add(() -> log.removeHandler(handler));
    return records;
  }

  @Test
  void errorOnTheHedge_withAnUnusableFirstCopy_returnsTheFirstCopysOutcome_andReleasesTheHedgesPick() throws Exception {
    CountDownLatch hedgeThrew = new CountDownLatch(1);
    AtomicInteger sent = new AtomicInteger();
    // The first copy reaches its server, which fires the hedge and answers 503 only once the hedge
    // copy threw an Error (as an AssertionError or Kotlin's NotImplementedError from an interceptor
    // that runs again for the copy would).
    Backends b = closer.add(Backends.start(2, i -> request -> {
      fireHedge();
      await(hedgeThrew, "the hedge copy threw");
      return new MockResponse.Builder().code(503).body("down").build();
    }));
    LoadBalancer lb = balancer(b);
    Interceptor after = chain -> {
      if (sent.getAndIncrement() == 1) {
        hedgeThrew.countDown();
        throw new AssertionError("not implemented");
      }
      return chain.proceed(chain.request());
    };
    OkHttpClient client = client(b, null, interceptor(lb).maxAttempts(2).build(), after);

    try (Response response = callAsync(client).get(5, TimeUnit.SECONDS)) {
      assertThat(response.code()).isEqualTo(503);
      assertThat(response.body().string()).isEqualTo("down");
    }

    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(b.totalRequests()).isEqualTo(1); // the hedge never left
    eventually("both picks completed", () -> noneInFlight(lb));
    assertThat(attempts(b, 0, "failure") + attempts(b, 1, "failure")).isEqualTo(1); // the 503; the Error is no target's fault
  }

  @Test
  void errorOnTheFirstCopy_disarmsTheHedgeTimer_andNoHedgeGoesOut() throws Exception {
    Backends b = closer.add(Backends.named(2));
    LoadBalancer lb = balancer(b);
    Interceptor after = chain -> {
      throw new AssertionError("not implemented");
    };
    OkHttpClient client = client(b, null, interceptor(lb).build(), after);

    assertThatThrownBy(() -> client.newCall(new Request.Builder().url("http://orders/x").build()).execute())
        .isInstanceOf(AssertionError.class).hasMessage("not implemented");

    assertThat(heldHedge.get()).as("the hedge timer after the call failed").isNull();
    fireHedge(); // (nothing, once disarmed)
    assertThat(hedges("sent")).isZero();
    assertThat(b.totalRequests()).isZero();
    eventually("the first copy's pick completed", () -> noneInFlight(lb));
  }

  @Test
  void interceptorHoldingALockAcrossProceed_doesNotDeadlockTheCallerWithTheHedge() throws Exception {
    ReentrantLock lock = new ReentrantLock();
    // Runs before the balancing interceptor, so each copy passes it again: the first copy on the
    // caller's thread (which holds the lock already), the hedge on a hedge thread (which blocks).
    Interceptor before = chain -> {
      lock.lock();
      try {
        return chain.proceed(chain.request());
      } finally {
        lock.unlock();
      }
    };
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(3, i -> request -> {
      if (seen.getAndIncrement() > 0) {
        return Backends.ok("s" + i); // the retry, on the third target
      }
      fireHedge();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (!lock.hasQueuedThreads() && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(lock.hasQueuedThreads()).as("the hedge waits for the caller's lock").isTrue();
      return new MockResponse.Builder().code(503).body("down").build();
    }));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = client(b, before, interceptor(lb).build(), null);

    try (Response response = callAsync(client).get(5, TimeUnit.SECONDS)) {
      // The hedge never got past the lock, so the caller did not wait for it: it retried.
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.body().string()).startsWith("s");
    }

    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    assertThat(b.totalRequests()).isEqualTo(2); // the first copy and the retry; the hedge was cancelled before it left
    eventually("every pick completed", () -> noneInFlight(lb));
  }

  @Test
  void hedgeThatReallyFailed_thenWasCancelled_isAFailureOfItsTarget_andNoLatencySample() throws Exception {
    CountDownLatch hedgeFailed = new CountDownLatch(1);
    AtomicInteger sent = new AtomicInteger();
    AtomicInteger firstServer = new AtomicInteger(-1);
    Backends b = closer.add(Backends.start(2, i -> request -> {
      firstServer.set(i);
      fireHedge();
      await(hedgeFailed, "the hedge was refused");
      return Backends.ok("first");
    }));
    int deadPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      deadPort = socket.getLocalPort(); // closed again: it refuses connections
    }
    // The hedge copy's connection is refused for real; its failure reaches this interceptor, which
    // holds it until the race has cancelled the copy (the first copy won meanwhile).
    Interceptor after = chain -> {
      if (sent.getAndIncrement() != 1) {
        return chain.proceed(chain.request());
      }
      Request request = chain.request();
      try {
        return chain.proceed(request.newBuilder().url(request.url().newBuilder().port(deadPort).build()).build());
      } catch (IOException e) {
        hedgeFailed.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!chain.call().isCanceled() && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        throw e;
      }
    };
    AtomicLong now = new AtomicLong();
    LoadBalancer lb = balancer(b);
    LoadBalancingInterceptor lbi = LoadBalancingInterceptor.builder().service("orders", lb).ticker(now::get)
        .hedgeScheduler(held, hedgePool).hedging(HedgingPolicy.percentile(95.0).withLoserHold(NO_HOLD)).build();
    ServiceHedging hedging = lbi.route("orders").hedging;
    for (int i = 0; i < HedgingPolicy.MIN_SAMPLES; i++) {
      hedging.window.record(TimeUnit.MILLISECONDS.toNanos(5));
    }
    now.addAndGet(TimeUnit.SECONDS.toNanos(1));
    hedging.window.refreshIfDue(now.get());
    assertThat(hedging.window.delayNanos()).isPositive();
    OkHttpClient client = client(b, null, lbi, after);

    try (Response response = callAsync(client).get(5, TimeUnit.SECONDS)) {
      assertThat(response.body().string()).isEqualTo("first");
    }

    int hedgeServer = 1 - firstServer.get();
    assertThat(hedges("sent")).isEqualTo(1.0);
    eventually("the hedge settled", () -> noneInFlight(lb));
    eventually("the hedge's outcome recorded", () -> attempts(b, hedgeServer, "failure") + attempts(b, hedgeServer, "cancelled") == 1);
    assertThat(attempts(b, hedgeServer, "failure")).as("refused: passive health hears of it").isEqualTo(1);
    assertThat(attempts(b, hedgeServer, "cancelled")).isZero();
    now.addAndGet(TimeUnit.SECONDS.toNanos(2)); // the window takes in what was recorded since
    hedging.window.refreshIfDue(now.get());
    assertThat(hedging.window.samples()).as("the first copy's time only").isEqualTo(HedgingPolicy.MIN_SAMPLES + 1);
  }

  @Test
  void runtimeExceptionOnTheHedge_isLogged_andTheFirstCopyAnswers() throws Exception {
    List<LogRecord> warnings = logged(Level.WARNING);
    CountDownLatch hedgeThrew = new CountDownLatch(1);
    AtomicInteger sent = new AtomicInteger();
    IllegalStateException bug = new IllegalStateException("a bug in a later interceptor");
    Backends b = closer.add(Backends.start(2, i -> request -> {
      fireHedge();
      await(hedgeThrew, "the hedge copy threw");
      return Backends.ok("first");
    }));
    LoadBalancer lb = balancer(b);
    Interceptor after = chain -> {
      if (sent.getAndIncrement() == 1) {
        hedgeThrew.countDown();
        throw bug;
      }
      return chain.proceed(chain.request());
    };
    OkHttpClient client = client(b, null, interceptor(lb).build(), after);

    try (Response response = callAsync(client).get(5, TimeUnit.SECONDS)) {
      assertThat(response.body().string()).isEqualTo("first");
    }

    eventually("the hedge settled", () -> noneInFlight(lb));
    eventually("the hedge's failure logged", () -> !warnings.isEmpty());
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0).getMessage()).isEqualTo("hedge of a call to orders failed with a non-I/O exception");
    assertThat(warnings.get(0).getThrown()).isSameAs(bug);
  }

  @Test
  void bothCopiesAnsweringAtOnce_oneResponseReturned_theOtherClosedAndReleased() throws Exception {
    // Each copy, once its response is in hand, waits for the other's: both responses exist before
    // either copy's outcome reaches the race.
    CyclicBarrier bothAnswered = new CyclicBarrier(2);
    Backends b = closer.add(Backends.start(2, i -> request -> {
      fireHedge(); // the first copy's arrival sends the hedge; the hedge's finds none held
      return Backends.ok("s" + i);
    }));
    LoadBalancer lb = balancer(b);
    Interceptor after = chain -> {
      Response response = chain.proceed(chain.request());
      try {
        bothAnswered.await(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        response.close();
        throw new IOException("the other copy did not answer", e);
      }
      return response;
    };
    OkHttpClient client = client(b, null, interceptor(lb).build(), after);

    int servedBy;
    try (Response response = callAsync(client).get(5, TimeUnit.SECONDS)) {
      assertThat(response.code()).isEqualTo(200);
      servedBy = server(b, response);
      assertThat(response.body().string()).isEqualTo("s" + servedBy);
    }

    assertThat(b.requests(0)).isEqualTo(1);
    assertThat(b.requests(1)).isEqualTo(1);
    assertThat(hedges("sent")).isEqualTo(1.0);
    eventually("both picks completed", () -> noneInFlight(lb));
    assertThat(attempts(b, servedBy, "success")).isEqualTo(1);
    assertThat(attempts(b, 1 - servedBy, "cancelled")).isEqualTo(1); // superseded: released, no failure
    assertThat(attempts(b, 0, "failure") + attempts(b, 1, "failure")).isZero();
    eventually("no connection in use",
        () -> client.connectionPool().connectionCount() == client.connectionPool().idleConnectionCount());
    assertThat(registry.find("fairway.leaked.responses").counter()).isNull();
  }

  @Test
  void hedgePoolAtCapacity_noHedgeIsSent_theFirstCopyAnswers() throws Exception {
    ThreadPoolExecutor full = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>());
    CountDownLatch release = new CountDownLatch(1);
    closer.add(full::shutdownNow);
    closer.add(release::countDown);
    full.execute(() -> await(release, "the test ended"));
    Backends b = closer.add(Backends.start(2, i -> request -> {
      fireHedge();
      return Backends.ok("first");
    }));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = client(b, null, LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(held, full).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(NO_HOLD)).build(), null);

    for (int i = 0; i < 2; i++) {
      try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
        assertThat(response.body().string()).isEqualTo("first");
      }
    }

    assertThat(b.totalRequests()).isEqualTo(2);
    assertThat(hedges("sent")).isZero();
    assertThat(hedges("budget_exhausted")).isZero();
    assertThat(full.getCompletedTaskCount()).isZero();
    eventually("every pick completed", () -> noneInFlight(lb));
  }
}
