package dev.fairway.lb.jdk;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.testing.FaultServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The caller's reasons end a call without charging a target: an interrupted {@code send}, a
 * cancelled {@code sendAsync} future; the request's own timeout is the target's failure. Two
 * loopback targets that read each request and never answer; the balancer ejects a target on its
 * first failure, so a target charged with one shows as {@link TargetState#EJECTED}. After each:
 * nothing in flight, and (but for a GET whose timeout is retried) exactly one request reached a server.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CancellationTest {
  private final List<AutoCloseable> opened = new ArrayList<>();
  private final HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private FaultServer a;
  private FaultServer b;
  private LoadBalancer lb;
  private FairwayHttpClient client;

  @BeforeEach
  void start() throws IOException {
    a = FaultServer.start(FaultServer.Behaviour.HEADERS_NEVER_COME);
    opened.add(a);
    b = FaultServer.start(FaultServer.Behaviour.HEADERS_NEVER_COME);
    opened.add(b);
    lb = LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", a.port()), Target.of("127.0.0.1", b.port()))
        .strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.defaults().withConsecutiveFailures(1).withMaxEjectionPercent(100))
        .build();
    opened.add(lb);
    client = FairwayHttpClient.builder(plain).service("orders", lb).build();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  private static HttpRequest get(String id) {
    return HttpRequest.newBuilder(URI.create("http://orders/slow")).header(FaultServer.CALL_HEADER, id).build();
  }

  private int inFlight() {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum();
  }

  private void assertNothingHeldAndNoTargetCharged(String id) {
    assertThat(inFlight()).as("in flight").isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    assertThat(a.received(id) + b.received(id)).as("servers reached by %s", id).isEqualTo(1);
  }

  @Test
  void interruptedSend_throwsInterruptedException_freesTheSlot_chargesNoTarget() throws Exception {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        client.send(get("interrupted"), BodyHandlers.ofString());
      } catch (Throwable e) {
        thrown.set(e);
      }
    }, "interrupted-caller");
    caller.start();
    eventually("the request reached a server", () -> a.received("interrupted") + b.received("interrupted") == 1);
    assertThat(inFlight()).isEqualTo(1);

    caller.interrupt();
    caller.join(TimeUnit.SECONDS.toMillis(10));

    assertThat(caller.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
    assertNothingHeldAndNoTargetCharged("interrupted");
  }

  /**
   * The JDK's rule, measured here on its own client and through Fairway: {@code cancel(true)} on
   * {@code sendAsync}'s future aborts the exchange, and the server sees its HTTP/1.1 connection
   * closed.
   */
  @Test
  void cancelledSendAsync_freesTheSlotAtOnce_chargesNoTarget_andTheServerSeesTheConnectionClosed() throws Exception {
    CompletableFuture<HttpResponse<String>> plainFuture = plain.sendAsync(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + a.port() + "/slow")).header(FaultServer.CALL_HEADER, "plain").build(),
        BodyHandlers.ofString());
    eventually("the plain request reached the server", () -> a.received("plain") == 1);
    assertThat(plainFuture.cancel(true)).isTrue();
    eventually("the server saw the plain client close the connection", () -> a.closedByClient() == 1);

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get("cancelled"), BodyHandlers.ofString());
    eventually("the request reached a server", () -> a.received("cancelled") + b.received("cancelled") == 1);
    assertThat(inFlight()).isEqualTo(1);

    assertThat(future.cancel(true)).isTrue();

    assertThat(inFlight()).as("freed by the cancel itself").isZero();
    assertThatThrownBy(future::join).isInstanceOf(CancellationException.class);
    eventually("the server saw Fairway's attempt's connection closed", () -> a.closedByClient() + b.closedByClient() == 2);
    assertNothingHeldAndNoTargetCharged("cancelled");
  }

  @Test
  void requestTimeout_isTheTargetsFailure_aPostIsNotRetried() throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://orders/slow"))
        .header(FaultServer.CALL_HEADER, "timeout-post").timeout(Duration.ofMillis(300))
        .POST(HttpRequest.BodyPublishers.ofString("x")).build();

    assertThatThrownBy(() -> client.send(request, BodyHandlers.ofString())).isInstanceOf(HttpTimeoutException.class);

    assertThat(inFlight()).as("in flight").isZero();
    assertThat(a.received("timeout-post") + b.received("timeout-post")).as("sent once").isEqualTo(1);
    FaultServer timedOut = a.received("timeout-post") == 1 ? a : b;
    assertThat(lb.status()).extracting(s -> s.target().port() + "=" + s.state()).containsExactlyInAnyOrder(
        a.port() + "=" + (timedOut == a ? TargetState.EJECTED : TargetState.HEALTHY),
        b.port() + "=" + (timedOut == b ? TargetState.EJECTED : TargetState.HEALTHY));
  }

  @Test
  void requestTimeout_isTheTargetsFailure_aGetIsRetriedOnTheOtherTarget_async() throws Exception {
    FairwayHttpClient twoAttempts = FairwayHttpClient.builder(plain).service("orders", lb).maxAttempts(2).build();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://orders/slow"))
        .header(FaultServer.CALL_HEADER, "timeout-get").timeout(Duration.ofMillis(300)).build();

    CompletableFuture<HttpResponse<String>> future = twoAttempts.sendAsync(request, BodyHandlers.ofString());

    assertThatThrownBy(() -> future.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(HttpTimeoutException.class);
    assertThat(a.received("timeout-get")).isEqualTo(1);
    assertThat(b.received("timeout-get")).isEqualTo(1);
    assertThat(inFlight()).isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.EJECTED);
  }
}
