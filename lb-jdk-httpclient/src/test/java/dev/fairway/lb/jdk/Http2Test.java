package dev.fairway.lb.jdk;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.testing.NoDelayServerSocketFactory;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Protocol;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HTTP/2, the JDK client's default, over TLS (the JDK speaks h2 only over TLS or by a cleartext
 * upgrade): MockWebServer targets with a held certificate for {@code localhost}. Retries and
 * cancellation of one stream among several on one multiplexed connection.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class Http2Test {
  private static final HeldCertificate LOCALHOST = new HeldCertificate.Builder().addSubjectAlternativeName("localhost").build();
  private static final HandshakeCertificates SERVER_CERTS = new HandshakeCertificates.Builder().heldCertificate(LOCALHOST).build();
  private static final HandshakeCertificates CLIENT_CERTS =
      new HandshakeCertificates.Builder().addTrustedCertificate(LOCALHOST.certificate()).build();

  private final List<AutoCloseable> opened = new ArrayList<>();
  private final HttpClient h2 = HttpClient.newBuilder().sslContext(CLIENT_CERTS.sslContext())
      .version(HttpClient.Version.HTTP_2).build();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  /** An h2 target answering by path: /slow after 5 s, /unavailable with 503, anything else 200 "ok". */
  private MockWebServer target() throws IOException {
    MockWebServer server = new MockWebServer();
    server.setServerSocketFactory(NoDelayServerSocketFactory.INSTANCE);
    server.useHttps(SERVER_CERTS.sslSocketFactory());
    server.setProtocols(List.of(Protocol.HTTP_2, Protocol.HTTP_1_1));
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return switch (request.getTarget()) {
          case "/slow" -> new MockResponse.Builder().body("slow").headersDelay(5, TimeUnit.SECONDS).build();
          case "/unavailable" -> new MockResponse.Builder().code(503).body("unavailable").build();
          default -> new MockResponse.Builder().body("ok").build();
        };
      }
    });
    server.start();
    opened.add(server);
    return server;
  }

  private LoadBalancer balancer(MockWebServer... servers) {
    List<Target> targets = new ArrayList<>();
    for (MockWebServer s : servers) {
      targets.add(Target.of("localhost", s.getPort()));
    }
    LoadBalancer lb = LoadBalancer.builder("orders").targets(targets.toArray(new Target[0]))
        .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb);
    return lb;
  }

  private static int inFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum();
  }

  private static HttpRequest get(String path) {
    return HttpRequest.newBuilder(URI.create("https://orders" + path)).build();
  }

  @Test
  void h2_isSpokenThroughFairway_andA503IsRetriedOnTheOtherTarget() throws Exception {
    MockWebServer a = target();
    MockWebServer b = target();
    LoadBalancer lb = balancer(a, b);
    FairwayHttpClient client = FairwayHttpClient.builder(h2).service("orders", lb).build();

    HttpResponse<String> ok = client.send(get("/ok"), BodyHandlers.ofString());
    assertThat(ok.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(ok.body()).isEqualTo("ok");

    HttpResponse<String> retried = client.sendAsync(get("/unavailable"), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
    assertThat(retried.statusCode()).as("both targets answer 503: the last is replayed").isEqualTo(503);
    assertThat(retried.body()).isEqualTo("unavailable");
    assertThat(a.getRequestCount() + b.getRequestCount()).isEqualTo(1 + 3); // 3 attempts over 2 targets
    assertThat(inFlight(lb)).isZero();
  }

  /**
   * The rule on h2: cancelling one call's future resets its stream only; the calls beside it on
   * the same connection go on, and later calls still reuse that connection.
   */
  @Test
  void cancellingOneStream_leavesTheMultiplexedConnectionAndItsOtherStreamsAlone() throws Exception {
    MockWebServer a = target();
    LoadBalancer lb = balancer(a);
    FairwayHttpClient client = FairwayHttpClient.builder(h2).service("orders", lb).build();
    assertThat(client.send(get("/warm"), BodyHandlers.ofString()).version()).isEqualTo(HttpClient.Version.HTTP_2);

    CompletableFuture<HttpResponse<String>> slow = client.sendAsync(get("/slow"), BodyHandlers.ofString());
    eventually("the slow call reached the server", () -> a.getRequestCount() == 2);
    CompletableFuture<HttpResponse<String>> beside = client.sendAsync(get("/beside"), BodyHandlers.ofString());
    assertThat(beside.get(10, TimeUnit.SECONDS).body()).isEqualTo("ok");
    assertThat(inFlight(lb)).isEqualTo(1);

    assertThat(slow.cancel(true)).isTrue();
    assertThat(inFlight(lb)).isZero();
    assertThatThrownBy(slow::join).isInstanceOf(CancellationException.class);

    assertThat(client.send(get("/after"), BodyHandlers.ofString()).body()).isEqualTo("ok");
    List<RecordedRequest> recorded = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      RecordedRequest r = a.takeRequest(5, TimeUnit.SECONDS);
      recorded.add(requireNonNull(r));
    }
    assertThat(recorded).extracting(RecordedRequest::getTarget).containsExactlyInAnyOrder("/warm", "/slow", "/beside", "/after");
    assertThat(recorded).extracting(RecordedRequest::getConnectionIndex).as("one connection").containsOnly(0);
    assertThat(inFlight(lb)).isZero();
  }

  private static RecordedRequest requireNonNull(@Nullable RecordedRequest r) {
    assertThat(r).isNotNull();
    return r;
  }
}
