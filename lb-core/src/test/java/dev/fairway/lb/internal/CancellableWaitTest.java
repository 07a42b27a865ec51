package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The shared backoff wait: it must end when the call is cancelled, since a cancel interrupts no thread. */
class CancellableWaitTest {
  @Test
  void await_endsAtTheFirstLookThatSeesTheCancel() throws Exception {
    AtomicInteger looks = new AtomicInteger();

    boolean waited = CancellableWait.await(60_000, () -> looks.incrementAndGet() == 3);

    assertThat(waited).isFalse();
    assertThat(looks).hasValue(3); // before the first park, after it, after the second
  }

  @Test
  void await_failsAtOnceForACallCancelledBefore_evenWithNoTimeToWait() throws Exception {
    assertThat(CancellableWait.await(60_000, () -> true)).isFalse();
    assertThat(CancellableWait.await(0, () -> true)).isFalse();
  }

  @Test
  void await_endsOnInterruptAndKeepsTheInterruptFlag() {
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> CancellableWait.await(60_000, () -> false))
          .isInstanceOf(InterruptedIOException.class)
          .hasMessage("interrupted during retry backoff");
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void await_waitsTheGivenTimeOtherwise() throws Exception {
    long start = System.nanoTime();

    assertThat(CancellableWait.await(30, () -> false)).isTrue();
    assertThat(CancellableWait.await(0, () -> false)).isTrue();
    assertThat(CancellableWait.await(-5, () -> false)).isTrue();

    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(30);
  }
}
