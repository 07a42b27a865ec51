package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InterruptedIOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The default backoff wait: it must end when the call is cancelled, since cancel() interrupts no thread. */
class SleeperTest {
  private final OkHttpClient client = new OkHttpClient();
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void shutDown() {
    scheduler.shutdownNow();
    client.dispatcher().executorService().shutdown();
  }

  private Call call() {
    return client.newCall(new Request.Builder().url("http://orders/x").build()); // never executed
  }

  @Test
  void cancellable_endsSoonAfterTheCallIsCancelled() {
    Call call = call();
    scheduler.schedule(call::cancel, 50, TimeUnit.MILLISECONDS);
    long start = System.nanoTime();

    assertThatThrownBy(() -> Sleeper.CANCELLABLE.sleep(60_000, call)).hasMessage("Canceled");
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
  }

  @Test
  void cancellable_failsAtOnceForACallCancelledBefore() {
    Call call = call();
    call.cancel();

    assertThatThrownBy(() -> Sleeper.CANCELLABLE.sleep(60_000, call)).hasMessage("Canceled");
  }

  @Test
  void cancellable_endsOnInterruptAndKeepsTheInterruptFlag() {
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> Sleeper.CANCELLABLE.sleep(60_000, call()))
          .isInstanceOf(InterruptedIOException.class)
          .hasMessage("interrupted during retry backoff");
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void cancellable_waitsTheGivenTimeOtherwise() throws Exception {
    long start = System.nanoTime();
    Sleeper.CANCELLABLE.sleep(30, call());
    Sleeper.CANCELLABLE.sleep(0, call());
    Sleeper.CANCELLABLE.sleep(-5, call());

    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(30);
  }
}
