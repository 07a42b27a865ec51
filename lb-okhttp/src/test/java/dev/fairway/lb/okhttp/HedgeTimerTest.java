package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.internal.hedging.HedgeTimer;
import dev.fairway.lb.testing.Closer;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link HedgeTimer} without its thread, on fake time: the test makes each pass of the timer by
 * hand ({@link HedgeTimer#runDue}), with real races armed by real calls.
 */
class HedgeTimerTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final Closer closer = new Closer();
  private final ExecutorService hedgePool = Executors.newCachedThreadPool();
  private final ExecutorService callers = Executors.newCachedThreadPool();
  private final AtomicLong now = new AtomicLong();
  private final HedgeTimer timer = new HedgeTimer(null, now::get);

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
    hedgePool.shutdownNow();
    callers.shutdownNow();
  }

  private OkHttpClient client(Backends b) {
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin()).build());
    return b.client(LoadBalancingInterceptor.builder().service("orders", lb).hedgeScheduler(timer, hedgePool)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50))).build());
  }

  private CompletableFuture<String> get(OkHttpClient client) {
    return CompletableFuture.supplyAsync(() -> {
      try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
        return response.body().string();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }, callers);
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(5, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Test
  void armedTimer_firesAtItsDeadline_notBefore() throws Exception {
    CountDownLatch firstArrived = new CountDownLatch(1);
    CountDownLatch callDone = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(2, i -> request -> {
      if (seen.getAndIncrement() == 0) {
        firstArrived.countDown();
        await(callDone); // answers (into a cancelled copy) only once the hedge's answer was returned
        return Backends.ok("slow");
      }
      return Backends.ok("hedge");
    }));
    CompletableFuture<String> body = get(client(b));
    await(firstArrived);

    assertThat(timer.runDue(49 * MS)).as("a new timer taken in").isTrue();
    assertThat(timer.queued()).isEqualTo(1);
    assertThat(timer.nextWaitNanos(49 * MS)).isEqualTo(MS);
    assertThat(b.totalRequests()).isEqualTo(1);
    assertThat(timer.runDue(50 * MS)).isFalse();

    assertThat(body.get(5, TimeUnit.SECONDS)).isEqualTo("hedge");
    callDone.countDown();
    assertThat(timer.queued()).isZero();
    assertThat(b.totalRequests()).isEqualTo(2);
  }

  @Test
  void disarmedTimer_leavesTheQueueOnTheNextPass_andNeverFires() throws Exception {
    CountDownLatch firstArrived = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    Backends b = closer.add(Backends.start(2, i -> request -> {
      firstArrived.countDown();
      await(answer);
      return Backends.ok("first");
    }));
    OkHttpClient client = client(b);
    CompletableFuture<String> body = get(client);
    await(firstArrived);
    assertThat(timer.runDue(MS)).isTrue();
    assertThat(timer.queued()).isEqualTo(1);

    answer.countDown(); // the first copy answers in time: the race disarms its timer
    assertThat(body.get(5, TimeUnit.SECONDS)).isEqualTo("first");
    timer.runDue(2 * MS);

    assertThat(timer.queued()).isZero();
    timer.runDue(100 * MS);
    assertThat(b.totalRequests()).isEqualTo(1);
    assertThat(timer.nextWaitNanos(100 * MS)).isEqualTo(HedgeTimer.TICK_NANOS);
  }

  @Test
  void timerDisarmedBeforeTheThreadSawIt_isDroppedWhenTakenIn() throws Exception {
    Backends b = closer.add(Backends.named(2));
    OkHttpClient client = client(b);

    for (int i = 0; i < 3; i++) {
      assertThat(get(client).get(5, TimeUnit.SECONDS)).startsWith("s");
    }
    assertThat(timer.runDue(0)).isTrue();

    assertThat(timer.queued()).isZero();
    timer.runDue(100 * MS);
    assertThat(b.totalRequests()).isEqualTo(3);
  }
}
