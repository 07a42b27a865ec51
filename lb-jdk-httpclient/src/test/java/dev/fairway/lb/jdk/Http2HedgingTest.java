package dev.fairway.lb.jdk;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.NoDelayServerSocketFactory;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockResponseBody;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Protocol;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/**
 * Hedging on HTTP/2 (the JDK's default), both copies on one multiplexed connection: two targets
 * that are one h2 server (same authority, different ids), so the JDK sends both copies as streams
 * of the same connection. What the JDK does to the losing copy's stream is measured at the server:
 * it receives {@code RST_STREAM} with {@code CANCEL} (the server's write to the stream fails with
 * that error code), the winner's stream on the same connection is untouched, and later calls still
 * reuse that connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class Http2HedgingTest {
  private static final HeldCertificate LOCALHOST = new HeldCertificate.Builder().addSubjectAlternativeName("localhost").build();
  private static final HandshakeCertificates SERVER_CERTS = new HandshakeCertificates.Builder().heldCertificate(LOCALHOST).build();
  private static final HandshakeCertificates CLIENT_CERTS =
      new HandshakeCertificates.Builder().addTrustedCertificate(LOCALHOST.certificate()).build();
  /** okhttp's frame log: the server logs every frame it reads ("<<") at FINE. */
  private static final Logger FRAMES = Logger.getLogger("okhttp3.internal.http2.Http2");

  private final List<AutoCloseable> opened = new ArrayList<>();
  private final HttpClient h2 = HttpClient.newBuilder().sslContext(CLIENT_CERTS.sslContext())
      .version(HttpClient.Version.HTTP_2).build();
  private final AtomicReference<TimerNode> race = new AtomicReference<>();
  private final List<String> inboundResets = new CopyOnWriteArrayList<>();
  private final Handler frameLog = new Handler() {
    @Override
    public void publish(LogRecord record) {
      String message = record.getMessage();
      if (message != null && message.startsWith("<<") && message.contains("RST_STREAM")) {
        inboundResets.add(message);
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  @AfterEach
  void closeAll() throws Exception {
    FRAMES.removeHandler(frameLog);
    FRAMES.setLevel(null);
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  @RepeatedTest(3)
  void hedgeOnOneMultiplexedConnection_theLoserIsResetWithCancel_andTheConnectionIsReused() throws Exception {
    FRAMES.setLevel(Level.FINE);
    FRAMES.addHandler(frameLog);
    AtomicInteger arrivals = new AtomicInteger();
    List<IOException> loserWriteFailures = new CopyOnWriteArrayList<>();
    MockWebServer server = new MockWebServer();
    server.setServerSocketFactory(NoDelayServerSocketFactory.INSTANCE);
    server.useHttps(SERVER_CERTS.sslSocketFactory());
    server.setProtocols(List.of(Protocol.HTTP_2, Protocol.HTTP_1_1));
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        if (request.getTarget().equals("/x") && arrivals.getAndIncrement() == 0) {
          // The first copy: headers only after 1 s, long after the hedge won; then a body whose
          // write tells how the stream ended.
          return new MockResponse.Builder().headersDelay(1, TimeUnit.SECONDS)
              .body(new RecordingBody(loserWriteFailures)).build();
        }
        return new MockResponse.Builder().body("fast").build();
      }
    });
    server.start();
    opened.add(server);
    LoadBalancer lb = LoadBalancer.builder("orders")
        .targets(Target.of("localhost", server.getPort()).withId("a"), Target.of("localhost", server.getPort()).withId("b"))
        .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb);
    FairwayHttpClient client = FairwayHttpClient.builder(h2).service("orders", lb)
        .hedgeScheduler(new Hedger.Scheduler() {
          @Override
          public void arm(TimerNode node, long delayNanos) {
            race.set(node);
          }

          @Override
          public void disarm(TimerNode node) {}
        }, Runnable::run)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withLoserHold(Duration.ZERO)).build();
    HttpResponse<String> warm = client.send(HttpRequest.newBuilder(URI.create("https://orders/warm")).build(),
        BodyHandlers.ofString());
    assertThat(warm.version()).isEqualTo(HttpClient.Version.HTTP_2);

    CompletableFuture<HttpResponse<String>> future =
        client.sendAsync(HttpRequest.newBuilder(URI.create("https://orders/x")).build(), BodyHandlers.ofString());
    eventually("the first copy reached the server", () -> arrivals.get() == 1);
    race.get().run(); // the delay passed: the hedge goes to the other target, the same connection
    HttpResponse<String> response = future.get(10, TimeUnit.SECONDS);

    assertThat(response.body()).isEqualTo("fast");
    assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(lb.status()).extracting(TargetStatus::inFlight).containsOnly(0);
    eventually("the server read the loser's RST_STREAM", () -> !inboundResets.isEmpty());
    eventually("the server's write to the loser's stream failed", () -> !loserWriteFailures.isEmpty());
    assertThat(loserWriteFailures.get(0)).isInstanceOf(StreamResetException.class);
    assertThat(((StreamResetException) loserWriteFailures.get(0)).errorCode).isEqualTo(ErrorCode.CANCEL);

    HttpResponse<String> after = client.send(HttpRequest.newBuilder(URI.create("https://orders/after")).build(),
        BodyHandlers.ofString());
    assertThat(after.body()).isEqualTo("fast");
    List<RecordedRequest> recorded = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      RecordedRequest r = server.takeRequest(5, TimeUnit.SECONDS);
      assertThat(r).isNotNull();
      recorded.add(r);
    }
    assertThat(recorded).extracting(RecordedRequest::getTarget).containsExactlyInAnyOrder("/warm", "/x", "/x", "/after");
    assertThat(recorded).extracting(RecordedRequest::getConnectionIndex).as("one connection throughout").containsOnly(0);
  }

  /** A body that writes a little, flushing, until its stream fails; records how it failed. */
  private static final class RecordingBody implements MockResponseBody {
    private final List<IOException> failures;

    RecordingBody(List<IOException> failures) {
      this.failures = failures;
    }

    @Override
    public long getContentLength() {
      return -1;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      try {
        for (int i = 0; i < 100; i++) {
          sink.writeUtf8("slow");
          sink.flush();
          Thread.sleep(20);
        }
      } catch (IOException e) {
        failures.add(e);
        throw e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
