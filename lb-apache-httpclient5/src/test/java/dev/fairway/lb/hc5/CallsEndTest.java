package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.testing.Closer;
import dev.fairway.lb.testing.FaultServer;
import io.github.resilience4j.core.IntervalFunction;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.RequestFailedException;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How an exchange ends when its caller stops waiting: an interrupt, an abort ({@code cancel()}, also
 * how a caller's deadline ends a classic request), a lease that timed out in the client's own pool.
 * Each frees the slot and charges no target: passive health ejects after one failure here, so a
 * target charged would show as ejected. A response timeout, by contrast, is the target's failure.
 */
@Timeout(30)
class CallsEndTest {
  private final Closer closer = new Closer();
  private final Clients clients = closer.add(new Clients());
  private final List<Thread> callers = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    Thread.interrupted(); // never leak an interrupt into the next test
    for (Thread t : callers) {
      t.interrupt();
      t.join(5_000);
    }
    closer.close();
  }

  private LoadBalancer balancer(FaultServer... servers) {
    List<Target> targets = new ArrayList<>();
    for (FaultServer s : servers) {
      targets.add(Target.of("127.0.0.1", s.port()));
    }
    return closer.add(LoadBalancer.builder("orders").targets(targets.toArray(new Target[0]))
        .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.defaults().withConsecutiveFailures(1)).build());
  }

  private static HttpGet get(String id) {
    HttpGet get = new HttpGet("http://orders/work");
    get.addHeader(FaultServer.CALL_HEADER, id);
    return get;
  }

  private static void assertIdleAndHealthy(LoadBalancer lb) throws InterruptedException {
    eventually("every target idle: " + lb.status(), () -> Clients.inFlight(lb) == 0);
    assertThat(lb.status()).allSatisfy(s -> assertThat(s.state()).as(s.target().id()).isEqualTo(TargetState.HEALTHY));
  }

  /** Runs {@code request} on a thread of its own, reading the entity; what it threw lands in {@code thrown}. */
  private Thread start(CloseableHttpClient client, HttpGet request, AtomicReference<Throwable> thrown,
      AtomicBoolean flagAfter) {
    Thread t = new Thread(() -> {
      try (ClassicHttpResponse response = client.executeOpen(null, request, null)) {
        EntityUtils.consume(response.getEntity());
      } catch (Throwable e) {
        thrown.set(e);
      } finally {
        flagAfter.set(Thread.currentThread().isInterrupted());
      }
    }, "caller");
    t.setDaemon(true);
    callers.add(t);
    t.start();
    return t;
  }

  @Test
  void interruptedBeforeExecute_throwsInterruptedIOException_sendsNothing_andHoldsNoSlot() throws Exception {
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(healthy);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    Thread.currentThread().interrupt();
    Throwable thrown = null;
    try {
      client.executeOpen(null, get("interrupted"), null).close();
    } catch (Throwable t) {
      thrown = t;
    }
    boolean flagKept = Thread.interrupted();

    assertThat(thrown).isInstanceOf(InterruptedIOException.class);
    assertThat(flagKept).as("the thread's interrupt flag after the call").isTrue();
    assertThat(healthy.receivedTotal()).isZero();
    assertIdleAndHealthy(lb);
    assertThat(Clients.code(client, get("next"))).isEqualTo(200);
  }

  @Test
  void interruptedWhileWaitingForTheHeaders_releasesThePick_isNotRetried_andChargesNoTarget() throws Exception {
    // A blocking socket read does not end on an interrupt: it ends at the response timeout (1 s),
    // and then the interrupt, not the timeout, decides.
    FaultServer silent = closer.add(FaultServer.start(FaultServer.Behaviour.HEADERS_NEVER_COME));
    LoadBalancer lb = balancer(silent);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 1_000);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicBoolean flagAfter = new AtomicBoolean();

    Thread caller = start(client, get("slow"), thrown, flagAfter);
    eventually("the request arrived", () -> silent.received("slow") == 1);
    caller.interrupt();
    caller.join(5_000);

    assertThat(thrown.get()).isInstanceOf(InterruptedIOException.class);
    assertThat(flagAfter.get()).isTrue();
    assertThat(silent.received("slow")).isEqualTo(1);
    assertIdleAndHealthy(lb);
  }

  @Test
  void abortedDuringTheExchange_releasesThePick_isNotRetried_andChargesNoTarget() throws Exception {
    FaultServer silent = closer.add(FaultServer.start(FaultServer.Behaviour.HEADERS_NEVER_COME));
    LoadBalancer lb = balancer(silent);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 10_000);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    HttpGet request = get("aborted");

    Thread caller = start(client, request, thrown, new AtomicBoolean());
    eventually("the request arrived", () -> silent.received("aborted") == 1);
    request.cancel();
    caller.join(5_000);

    assertThat(caller.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(IOException.class);
    assertThat(thrown.get().getSuppressed()).isEmpty();
    assertThat(silent.receivedTotal()).isEqualTo(1); // one target: a retry would have been a new round on it
    assertIdleAndHealthy(lb);
  }

  @Test
  void aCallersDeadline_abortsTheExchange_releasesThePick_andChargesNoTarget() throws Exception {
    FaultServer silent = closer.add(FaultServer.start(FaultServer.Behaviour.HEADERS_NEVER_COME));
    LoadBalancer lb = balancer(silent);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 10_000);
    HttpGet request = get("deadline");

    // The classic API has no call timeout: a deadline is a timer that cancels the request.
    CompletableFuture.runAsync(request::cancel, CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS));
    assertThatThrownBy(() -> client.executeOpen(null, request, null).close())
        .isInstanceOf(IOException.class)
        .isNotInstanceOf(SocketTimeoutException.class); // ended by the deadline, not the 10 s response timeout

    assertThat(silent.receivedTotal()).isEqualTo(1);
    assertIdleAndHealthy(lb);
  }

  @Test
  void abortedDuringTheBackoff_endsTheWait_andSendsNoFurtherAttempt() throws Exception {
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", unavailable.port()))
        .passiveHealth(PassiveHealth.disabled()).build());
    // A 60 s backoff before the second round: only the abort can end this call within the test's 30 s.
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb)
        .backoff(IntervalFunction.of(Duration.ofSeconds(60))).build(), 2_000);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    HttpGet request = get("backoff");

    Thread caller = start(client, request, thrown, new AtomicBoolean());
    eventually("the first attempt was answered", () -> unavailable.received("backoff") == 1);
    request.cancel();
    caller.join(10_000);

    assertThat(caller.isAlive()).as("the caller still waits").isFalse();
    assertThat(thrown.get()).isInstanceOf(RequestFailedException.class);
    assertThat(unavailable.received("backoff")).isEqualTo(1);
    assertIdleAndHealthy(lb);
  }

  @Test
  void abortedBeforeExecute_sendsNothing_andHoldsNoSlot() throws Exception {
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(healthy);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);
    HttpGet request = get("cancelled");
    request.cancel();

    assertThatThrownBy(() -> client.executeOpen(null, request, null).close()).isInstanceOf(IOException.class);

    assertThat(healthy.receivedTotal()).isZero();
    assertIdleAndHealthy(lb);
  }

  @Test
  void abortedWhileReadingTheEntity_releasesThePick_andChargesNoTarget() throws Exception {
    FaultServer slow = closer.add(FaultServer.start(FaultServer.Behaviour.SLOW_BODY));
    LoadBalancer lb = balancer(slow);
    // POST-like: a GET's small body would be read before execute() returns; 0 turns that off.
    CloseableHttpClient client = clients.client(
        FairwayHttpClient5.builder().service("orders", lb).bufferBodiesUpTo(0).build(), 2_000);
    HttpGet request = get("slow-body");

    ClassicHttpResponse response = client.executeOpen(null, request, null);
    assertThat(Clients.inFlight(lb)).isEqualTo(1);
    int first = response.getEntity().getContent().read();
    assertThat(first).isEqualTo(FaultServer.SLOW_BODY.charAt(0));
    request.cancel();
    assertThat(Clients.inFlight(lb)).as("a cancel alone does not end the attempt").isEqualTo(1);
    try {
      EntityUtils.consume(response.getEntity()); // HttpClient 5.4 lets a body started before the cancel finish
    } catch (IOException e) {
      // or the read ends with the cancel: either way the attempt is released, not a failure
    }
    response.close();

    assertIdleAndHealthy(lb);
  }

  @Test
  void aResponseTimeout_isTheTargetsFailure_andAGetMovesToAnotherTarget() throws Exception {
    FaultServer silent = closer.add(FaultServer.start(FaultServer.Behaviour.HEADERS_NEVER_COME));
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(silent, healthy);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 300);

    for (int i = 0; i < 2; i++) {
      assertThat(Clients.code(client, get("call-" + i))).isEqualTo(200);
    }

    assertThat(silent.receivedWithPrefix("call-")).isEqualTo(1); // then ejected: one failure in a row
    assertThat(lb.status()).filteredOn(s -> s.target().port() == silent.port()).singleElement()
        .extracting(TargetStatus::state).isEqualTo(TargetState.EJECTED);
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void aLeaseTimeoutInTheClientsOwnPool_releasesThePick_andChargesNoTarget() throws Exception {
    FaultServer big = closer.add(FaultServer.start(FaultServer.Behaviour.BIG_BODY));
    LoadBalancer lb = balancer(big);
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb).build();
    CloseableHttpClient client = clients.add(fairway.customize(Clients.builder(2_000, 1, 200)).build());

    ClassicHttpResponse holding = client.executeOpen(null, get("holding"), null); // its connection stays leased until closed
    assertThatThrownBy(() -> client.executeOpen(null, get("waiting"), null).close()).isInstanceOf(ConnectionRequestTimeoutException.class);
    assertThat(Clients.inFlight(lb)).isEqualTo(1);
    holding.close();

    assertThat(big.received("waiting")).isZero();
    assertIdleAndHealthy(lb);
  }
}
