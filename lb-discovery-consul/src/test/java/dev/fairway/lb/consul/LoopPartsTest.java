package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** The watch loop's parts with injected time and randomness: exact sequences. */
class LoopPartsTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @Test
  void backoff_doublesFromOneSecondToSixtySeconds_withFullJitter_andResets() {
    double[] r = {0.999_999};
    Backoff b = new Backoff(SECOND, 60 * SECOND, () -> r[0]);
    List<Long> caps = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      caps.add(TimeUnit.NANOSECONDS.toSeconds(b.nextCapNanos()));
      b.nextDelayNanos();
    }
    assertThat(caps).containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 60L, 60L, 60L);

    r[0] = 0.5;
    assertThat(b.nextDelayNanos()).isEqualTo(30 * SECOND);
    r[0] = 0.0;
    assertThat(b.nextDelayNanos()).as("full jitter reaches 0").isZero();

    b.reset();
    r[0] = 0.5;
    assertThat(b.nextDelayNanos()).isEqualTo(SECOND / 2);
    assertThat(b.failures()).isEqualTo(1);
  }

  @Test
  void backoff_neverOverflows_afterManyFailures() {
    Backoff b = new Backoff(SECOND, 60 * SECOND, () -> 0.999);
    for (int i = 0; i < 200; i++) {
      assertThat(b.nextDelayNanos()).isBetween(0L, 60 * SECOND);
    }
  }

  @Test
  void tokenBucket_allowsTheBurst_thenPacesAtTheRate() {
    AtomicLong now = new AtomicLong(1_000);
    TokenBucket bucket = new TokenBucket(SECOND / 5, 5, now::get);
    List<Long> waits = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      waits.add(TimeUnit.NANOSECONDS.toMillis(bucket.reserveNanos()));
    }
    assertThat(waits).containsExactly(0L, 0L, 0L, 0L, 0L, 200L, 400L, 600L);

    now.addAndGet(600 * 1_000_000L); // the debt is paid off exactly
    assertThat(TimeUnit.NANOSECONDS.toMillis(bucket.reserveNanos())).isEqualTo(200);
    now.addAndGet(10 * SECOND); // a long quiet spell refills to the burst, not beyond
    for (int i = 0; i < 5; i++) {
      assertThat(bucket.reserveNanos()).isZero();
    }
    assertThat(bucket.reserveNanos()).isEqualTo(SECOND / 5);
  }

  @Test
  void tokenBucket_theDefault_burstTwo_thenOneEvery500ms_exactly() {
    AtomicLong now = new AtomicLong(0);
    TokenBucket bucket = new TokenBucket(ConsulTargetSource.DEFAULT_REFILL.toNanos(), ConsulTargetSource.DEFAULT_BURST,
        now::get);
    assertThat(bucket.reserveNanos()).isZero();
    assertThat(bucket.reserveNanos()).isZero();
    assertThat(bucket.reserveNanos()).isEqualTo(SECOND / 2);
    now.addAndGet(SECOND / 2);
    assertThat(bucket.reserveNanos()).isEqualTo(SECOND / 2);
  }

  @Test
  void wakeupLimiter_everyHoldIsAtMost500ms_soAChangeWaitsLessThanTheOneSecondBound() {
    AtomicLong now = new AtomicLong(0);
    WakeupLimiter limiter = WakeupLimiter.of(
        new TokenBucket(ConsulTargetSource.DEFAULT_REFILL.toNanos(), ConsulTargetSource.DEFAULT_BURST, now::get), now::get);
    long longest = 0;
    // Every mix of replies, answered at once (the worst case: nothing blocks), for 2,000 replies.
    long pattern = 0x9E3779B97F4A7C15L;
    for (int i = 0; i < 2_000; i++) {
      boolean changed = ((pattern >>> (i % 64)) & 1) == 1 || i % 7 == 0;
      long wait = limiter.afterReply(changed, now.get());
      longest = Math.max(longest, wait);
      now.addAndGet(wait + 1_000_000L); // the next reply 1 ms after the query went out
    }
    assertThat(longest).as("the longest hold").isEqualTo(SECOND / 2);
    assertThat(longest).isLessThan(WakeupLimiter.LATENCY_BOUND.toNanos());
  }

  @Test
  void tokenBucket_rejectsNonsense() {
    assertThatThrownBy(() -> new TokenBucket(0, 5, System::nanoTime)).hasMessage("refillNanos: 0 (expected: >= 1)");
    assertThatThrownBy(() -> new TokenBucket(5, 0, System::nanoTime)).hasMessage("burst: 0 (expected: >= 1)");
  }

  @Test
  void goDuration_andReadTimeout() {
    assertThat(HealthQuery.goDuration(Duration.ofMinutes(5))).isEqualTo("5m");
    assertThat(HealthQuery.goDuration(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(HealthQuery.goDuration(Duration.ofMillis(1500))).isEqualTo("1500ms");
    // wait + wait/16 + margin (wait/10, 1 s..30 s)
    assertThat(HealthQuery.readTimeout(Duration.ofMinutes(5))).isEqualTo(Duration.ofMillis(300_000 + 18_750 + 30_000));
    assertThat(HealthQuery.readTimeout(Duration.ofSeconds(2))).isEqualTo(Duration.ofMillis(2_000 + 125 + 1_000));
    assertThat(HealthQuery.readTimeout(Duration.ofMinutes(10))).isEqualTo(Duration.ofMillis(600_000 + 37_500 + 30_000));
  }

  @Test
  void errorReasons_comeFromTheOneFailureClassification() {
    assertThat(WatchSteps.reason(new ConnectException("refused"))).isEqualTo("connect");
    assertThat(WatchSteps.reason(new HttpConnectTimeoutException("HTTP connect timed out"))).isEqualTo("connect");
    assertThat(WatchSteps.reason(new HttpTimeoutException("request timed out"))).isEqualTo("timeout");
    assertThat(WatchSteps.reason(new SocketTimeoutException("Read timed out"))).isEqualTo("timeout");
    assertThat(WatchSteps.reason(new IOException("unexpected end of stream"))).isEqualTo("io");
    assertThat(WatchSteps.reason(new SSLHandshakeException("Remote host terminated the handshake"))).isEqualTo("tls");
    assertThat(WatchSteps.reason(new IllegalStateException("?"))).isEqualTo("unexpected");
  }
}
