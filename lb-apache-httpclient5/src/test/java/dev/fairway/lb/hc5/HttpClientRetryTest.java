package dev.fairway.lb.hc5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.Closer;
import dev.fairway.lb.testing.FaultServer;
import io.github.resilience4j.core.IntervalFunction;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hc.client5.http.HttpHostConnectException;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.ChainElement;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.core5.util.TimeValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HttpClient's own {@code RETRY} element against Fairway's retries. HttpClient's default strategy
 * retries a 503 (and 429) once after a pause, and idempotent requests after some I/O errors; it sits
 * outside Fairway's handler, so left alone it would send the whole balanced exchange again. Here the
 * default strategy has a 10 ms pause (so the tests run fast) and the servers count what they saw.
 */
@Timeout(30)
class HttpClientRetryTest {
  private static final DefaultHttpRequestRetryStrategy FAST_DEFAULT =
      new DefaultHttpRequestRetryStrategy(1, TimeValue.ofMilliseconds(10));

  private final Closer closer = new Closer();
  private final Clients clients = closer.add(new Clients());

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  /** A refused target first, then one that answers 503: round robin, two attempts, no passive health. */
  private LoadBalancer refusedThenUnavailable(FaultServer unavailable) throws IOException {
    return closer.add(LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", FaultServer.refusedPort()), Target.of("127.0.0.1", unavailable.port()))
        .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build());
  }

  private static HttpGet get(String url, String id) {
    HttpGet get = new HttpGet(url);
    get.addHeader(FaultServer.CALL_HEADER, id);
    return get;
  }

  @Test
  void customize_leavesABalancedExchangeToFairway_refusedAnd503TargetsSeeOneAttemptEach() throws Exception {
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    LoadBalancer lb = refusedThenUnavailable(unavailable);
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb).maxAttempts(2).build();
    CloseableHttpClient client = clients.add(fairway.customize(Clients.builder(2_000, 5, 5_000), FAST_DEFAULT).build());

    for (int i = 0; i < 4; i++) {
      // Round robin decides which comes first: a 503 then a refused connect throws the latter, as lb-okhttp does.
      try {
        assertThat(Clients.code(client, get("http://orders/work", "call-" + i))).isEqualTo(503);
      } catch (HttpHostConnectException e) {
        assertThat(e).hasMessageContaining("Connection refused");
      }
    }

    // Each call: one attempt refused (never sent), one answered 503, and no third from HttpClient.
    for (int i = 0; i < 4; i++) {
      assertThat(unavailable.received("call-" + i)).as("call-" + i).isEqualTo(1);
    }
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void withoutCustomize_httpClientsRetrySendsTheBalancedExchangeAgain() throws Exception {
    // The interaction customize() prevents, on one 503 target and two attempts per exchange: the
    // handler added by hand under HttpClient's default strategy, beside the customized client.
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", unavailable.port()))
        .passiveHealth(PassiveHealth.disabled()).build());
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb).maxAttempts(2)
        .backoff(IntervalFunction.of(Duration.ofMillis(1))).build();
    CloseableHttpClient byHand = clients.add(Clients.builder(2_000, 5, 5_000)
        .addExecInterceptorBefore(ChainElement.PROTOCOL.name(), FairwayHttpClient5.EXEC_NAME, fairway.handler())
        .setRetryStrategy(FAST_DEFAULT)
        .build());
    CloseableHttpClient customized = clients.add(fairway.customize(Clients.builder(2_000, 5, 5_000), FAST_DEFAULT).build());

    assertThat(Clients.code(byHand, get("http://orders/work", "by-hand"))).isEqualTo(503);
    assertThat(Clients.code(customized, get("http://orders/work", "customized"))).isEqualTo(503);

    assertThat(unavailable.received("by-hand")).isEqualTo(4); // two exchanges of two attempts (a new round each)
    assertThat(unavailable.received("customized")).isEqualTo(2); // one exchange of two attempts
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void otherHosts_keepHttpClientsRetries() throws Exception {
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    FaultServer other = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", unavailable.port())).build());
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb).build();
    CloseableHttpClient client = clients.add(fairway.customize(Clients.builder(2_000, 5, 5_000), FAST_DEFAULT).build());

    assertThat(Clients.code(client, get("http://127.0.0.1:" + other.port() + "/work", "direct"))).isEqualTo(503);

    assertThat(other.received("direct")).isEqualTo(2); // HttpClient's one retry of a 503, as without Fairway
  }

  @Test
  void aResetTarget_isNotResentByHttpClient_fairwayMovesToAnotherTarget() throws Exception {
    FaultServer reset = closer.add(FaultServer.start(FaultServer.Behaviour.RESET_BEFORE_RESPONSE));
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", reset.port()), Target.of("127.0.0.1", healthy.port()))
        .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build());
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb).build();
    CloseableHttpClient client = clients.add(fairway.customize(Clients.builder(2_000, 5, 5_000), FAST_DEFAULT).build());

    AtomicInteger ok = new AtomicInteger();
    for (int i = 0; i < 4; i++) {
      if (Clients.code(client, get("http://orders/work", "call-" + i)) == 200) {
        ok.incrementAndGet();
      }
    }

    assertThat(ok.get()).isEqualTo(4);
    assertThat(reset.receivedWithPrefix("call-")).isPositive();
    for (int i = 0; i < 4; i++) {
      assertThat(reset.received("call-" + i)).as("call-%d at the reset target", i).isLessThanOrEqualTo(1);
      assertThat(healthy.received("call-" + i)).as("call-%d at the healthy target", i).isEqualTo(1);
    }
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void customize_rejectsNulls() {
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", 1)).build());
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb).build();
    assertThatThrownBy(() -> fairway.customize((HttpClientBuilder) null))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("builder: null (expected: an HttpClientBuilder)");
    assertThatThrownBy(() -> fairway.customize(Clients.builder(1_000, 1, 1_000), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("otherRequests: null (expected: an HttpRequestRetryStrategy)");
  }
}
