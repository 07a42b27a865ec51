package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.security.cert.CertificateException;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.junit.jupiter.api.Test;

/** The retry decisions alone, without a call or a client. */
class RetryRuleTest {
  private final RetryRule policy = new RetryRule(3, new int[] {502, 503, 504}, round -> 50L * round);

  @Test
  void onIOException_retriesWhatNeverLeftForEveryMethod() {
    for (IOException neverSent : List.of(
        new ConnectException("Connection refused"),
        new NoRouteToHostException("No route to host"),
        new SocketTimeoutException("Connect timed out"),
        new UnknownHostException("orders-7"),
        new SSLHandshakeException("Remote host terminated the handshake"),
        new IOException("wrapped", new ConnectException("refused")))) {
      assertThat(policy.onIOException(neverSent, false, 1)).as("%s", neverSent).isEqualTo("connect_failure");
      assertThat(policy.onIOException(neverSent, true, 2)).as("%s", neverSent).isEqualTo("connect_failure");
    }
  }

  @Test
  void onIOException_retriesAfterAPossibleSendOnlyWhenResendable() {
    for (IOException maybeSent : List.of(
        new SocketTimeoutException("timeout"),
        new SocketTimeoutException("Read timed out"),
        new IOException("unexpected end of stream", new EOFException()))) {
      assertThat(policy.onIOException(maybeSent, true, 1)).as("%s", maybeSent).isEqualTo("io_failure");
      assertThat(policy.onIOException(maybeSent, false, 1)).as("%s", maybeSent).isNull();
    }
    // OkHttp re-sent on a fresh connection after a dead pooled one: the first try may have been sent.
    ConnectException afterStale = new ConnectException("Failed to connect");
    afterStale.addSuppressed(new IOException("unexpected end of stream"));
    assertThat(policy.onIOException(afterStale, false, 1)).isNull();
    assertThat(policy.onIOException(afterStale, true, 1)).isEqualTo("io_failure");
  }

  @Test
  void onIOException_doesNotRetryARejectedCertificate() {
    SSLHandshakeException untrusted = new SSLHandshakeException("PKIX path building failed");
    untrusted.initCause(new CertificateException("unable to find valid certification path"));

    assertThat(policy.onIOException(untrusted, true, 1)).isNull();
    assertThat(policy.onIOException(new SSLPeerUnverifiedException("Hostname orders not verified"), true, 1)).isNull();
  }

  @Test
  void onIOException_stopsAtMaxAttempts() {
    assertThat(policy.onIOException(new ConnectException("refused"), true, 2)).isEqualTo("connect_failure");
    assertThat(policy.onIOException(new ConnectException("refused"), true, 3)).isNull();
  }

  @Test
  void onResponse_retriesRetryableStatusesOfResendableRequestsOnly() {
    assertThat(policy.onResponse(503, true, 1)).isEqualTo("status_503");
    assertThat(policy.onResponse(502, true, 2)).isEqualTo("status_502");
    assertThat(policy.onResponse(503, true, 3)).isNull(); // maxAttempts reached
    assertThat(policy.onResponse(503, false, 1)).isNull();
    assertThat(policy.onResponse(500, true, 1)).isNull(); // a failure, not retryable
    assertThat(policy.onResponse(200, true, 1)).isNull();
    assertThat(policy.onResponse(999, true, 1)).isNull();
    assertThat(policy.onResponse(503, true, 1)).isSameAs(policy.onResponse(503, true, 2)); // made once
  }

  @Test
  void backoffMillis_followsTheIntervalFunctionAndNeverGoesNegative() {
    assertThat(policy.backoffMillis(1)).isEqualTo(50);
    assertThat(policy.backoffMillis(3)).isEqualTo(150);
    assertThat(new RetryRule(3, new int[0], round -> -5L).backoffMillis(1)).isZero();
    assertThat(new RetryRule(3, new int[0], round -> null).backoffMillis(1)).isZero();
  }

  @Test
  void everyTargetTried_onlyWhenEachMemberWasTried() {
    Target a = Target.of("10.0.0.1", 80);
    Target b = Target.of("10.0.0.2", 80);
    List<TargetStatus> members;
    try (LoadBalancer lb = LoadBalancer.builder("orders").targets(a, b).build()) {
      members = lb.status();
    }

    assertThat(RetryRule.everyTargetTried(members, Set.of(a, b))).isTrue();
    assertThat(RetryRule.everyTargetTried(members, Set.of(a))).isFalse(); // say b was ejected before this call
    assertThat(RetryRule.everyTargetTried(members, null)).isFalse();
    assertThat(RetryRule.everyTargetTried(List.of(), Set.of(a))).isFalse(); // a closed balancer has none
  }

  @Test
  void idempotency_resendability_andHedgeability_followMethodMarkAndBody() {
    assertThat(RetryRule.isResendable("GET", null, true)).isTrue();
    assertThat(RetryRule.isResendable("PUT", null, true)).isTrue();
    assertThat(RetryRule.isResendable("DELETE", null, true)).isTrue();
    assertThat(RetryRule.isResendable("POST", null, true)).isFalse();
    assertThat(RetryRule.isResendable("PATCH", null, true)).isFalse();
    assertThat(RetryRule.isResendable("PUT", null, false)).as("a body that cannot be written twice").isFalse();
    assertThat(RetryRule.isResendable("POST", Boolean.TRUE, true)).isTrue();
    assertThat(RetryRule.isResendable("GET", Boolean.FALSE, true)).isFalse();
    assertThat(RetryRule.isResendable("get", null, true)).as("methods are case-sensitive").isFalse();

    assertThat(RetryRule.isHedgeable("GET", null, true)).isTrue();
    assertThat(RetryRule.isHedgeable("HEAD", null, true)).isTrue();
    assertThat(RetryRule.isHedgeable("OPTIONS", null, true)).isTrue();
    assertThat(RetryRule.isHedgeable("PUT", null, true)).as("retried, but not hedged unless marked").isFalse();
    assertThat(RetryRule.isHedgeable("DELETE", null, true)).isFalse();
    assertThat(RetryRule.isHedgeable("POST", Boolean.TRUE, true)).isTrue();
    assertThat(RetryRule.isHedgeable("POST", Boolean.TRUE, false)).isFalse();
    assertThat(RetryRule.isHedgeable("GET", Boolean.FALSE, true)).isFalse();
  }

  @Test
  void badConfiguration_isRejectedNamingTheField() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RetryRule(0, new int[0], round -> 0L))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxAttempts");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RetryRule(3, new int[] {600}, round -> 0L))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryStatusCodes").hasMessageContaining("600");
  }
}
