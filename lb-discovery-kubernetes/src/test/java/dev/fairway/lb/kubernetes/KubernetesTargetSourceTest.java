package dev.fairway.lb.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.Target;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec.Endpoint;
import dev.fairway.lb.kubernetes.fake.FakeKubernetes;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The source against the fake API server on loopback: list, watch, bookmarks, 410, 403, errors, slow streams. */
class KubernetesTargetSourceTest {
  private static final String NS = "shop";
  private final FakeKubernetes fake = FakeKubernetes.start();
  private final MeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void closeFake() {
    fake.close();
  }

  private KubernetesTargetSource.Builder fast() {
    return KubernetesTargetSource.builder("orders")
        .environment(Map.of())
        .apiServer(fake.url())
        .namespace(NS)
        .portName("http")
        .meterRegistry(registry)
        .backoff(Duration.ofMillis(20), Duration.ofMillis(200));
  }

  private static EndpointSliceSpec slice(String name, Endpoint... endpoints) {
    EndpointSliceSpec s = EndpointSliceSpec.of(name, "orders").port("http", 8080);
    for (Endpoint e : endpoints) {
      s.endpoint(e);
    }
    return s;
  }

  private double errors(String reason) {
    var c = registry.find("fairway.discovery.errors").tags("service", "orders", "reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  private double skipped(String reason) {
    var c = registry.find("fairway.discovery.skipped").tags("service", "orders", "reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  private List<FakeKubernetes.SeenRequest> watches() {
    return fake.requests().stream().filter(r -> r.target().contains("watch=1")).toList();
  }

  private List<FakeKubernetes.SeenRequest> lists() {
    return fake.requests().stream().filter(r -> !r.target().contains("watch=1")).toList();
  }

  @Test
  void listsThenWatchesFromTheListsResourceVersion() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    fake.apply("other", slice("orders-x", Endpoint.readyPod("10.9.9.9", "o-9", "z1"))); // another namespace
    fake.apply(NS, EndpointSliceSpec.of("payments-a", "payments").port("http", 8080)
        .endpoint(Endpoint.readyPod("10.0.0.7", "p-1", "z1"))); // another Service
    long rv = fake.revision();
    try (KubernetesTargetSource source = fast().build(); Lists lists = new Lists(source)) {
      assertThat(Lists.ids(source.whenReady().get(20, TimeUnit.SECONDS))).containsExactly("10.0.0.1:8080");
      Lists.await("a watch", () -> fake.openWatches() == 1);
      assertThat(lists().get(0).target()).isEqualTo("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices"
          + "?labelSelector=kubernetes.io%2Fservice-name%3Dorders");
      assertThat(watches().get(0).target()).startsWith("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices"
          + "?labelSelector=kubernetes.io%2Fservice-name%3Dorders&watch=1&resourceVersion=" + rv
          + "&allowWatchBookmarks=true&timeoutSeconds=");

      fake.apply(NS, slice("orders-b", Endpoint.readyPod("10.0.0.2", "o-2", "z2")));
      lists.nextIds("10.0.0.1:8080", "10.0.0.2:8080");
      fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.3", "o-3", "z1")));
      lists.nextIds("10.0.0.2:8080", "10.0.0.3:8080");
      fake.delete(NS, "orders-b");
      List<Target> last = lists.nextIds("10.0.0.3:8080");
      assertThat(last.get(0).zone()).isEqualTo("z1");
      assertThat(lists()).hasSize(1);
      assertThat(errors("gone") + errors("io") + errors("stalled")).isZero();
    }
  }

  @Test
  void aBookmarkMovesTheResumePoint_andAnEndedWatchResumesFromIt() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    try (KubernetesTargetSource source = fast().build()) {
      source.whenReady().get(20, TimeUnit.SECONDS);
      Lists.await("a watch", () -> fake.openWatches() == 1);
      fake.apply(NS, EndpointSliceSpec.of("payments-a", "payments").port("http", 8080)
          .endpoint(Endpoint.readyPod("10.0.0.7", "p-1", "z1"))); // moves the revision, not for this watch
      long bookmarked = fake.revision();
      fake.bookmark();
      Thread.sleep(200); // let the bookmark arrive before the stream ends (the assertion below holds either way
                         // only if it did: the next watch must then start from the bookmark)
      fake.endWatches();
      Lists.await("a second watch", () -> watches().size() == 2);
      assertThat(watches().get(1).target()).contains("&resourceVersion=" + bookmarked + "&");
      assertThat(lists()).hasSize(1);
    }
  }

  @Test
  void goneAsAnErrorEvent_listsAgain_keepingTheLastListMeanwhile() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    try (KubernetesTargetSource source = fast().build(); Lists lists = new Lists(source)) {
      source.whenReady().get(20, TimeUnit.SECONDS);
      Lists.await("a watch", () -> fake.openWatches() == 1);
      fake.forbid(false);
      fake.failNext(500, 1); // the relist fails once: the list must stay meanwhile
      fake.expireWatches();
      Lists.await("a second list", () -> lists().size() == 3);
      assertThat(source.targets()).extracting(Target::id).containsExactly("10.0.0.1:8080");
      Lists.await("a new watch", () -> fake.openWatches() == 1);
      fake.apply(NS, slice("orders-b", Endpoint.readyPod("10.0.0.2", "o-2", "z1")));
      lists.nextIds("10.0.0.1:8080", "10.0.0.2:8080");
      assertThat(errors("gone")).isEqualTo(1);
      assertThat(errors("http_500")).isEqualTo(1);
      assertThat(lists.seen).noneMatch(List::isEmpty);
    }
  }

  @Test
  void goneAsHttpStatus_onAResumedWatch_listsAgain_andSeesWhatChangedMeanwhile() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    fake.goneAsHttpStatus(true);
    try (KubernetesTargetSource source = fast().build(); Lists lists = new Lists(source)) {
      source.whenReady().get(20, TimeUnit.SECONDS);
      Lists.await("a watch", () -> fake.openWatches() == 1);
      fake.stallWatches(true); // the open watch misses the change below
      fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.5", "o-5", "z1")));
      fake.compact();
      fake.stallWatches(false);
      fake.endWatches();
      lists.nextIds("10.0.0.5:8080");
      assertThat(fake.requests()).anyMatch(r -> r.status() == 410);
      assertThat(errors("gone")).isEqualTo(1);
      assertThat(lists()).hasSize(2);
    }
  }

  @Test
  void forbidden_failsWhenReady_namingThePermission_andRecoversOnceGranted() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    fake.forbid(true);
    try (KubernetesTargetSource source = fast().build()) {
      assertThatThrownBy(() -> source.whenReady().get(20, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(KubernetesApiException.class)
          .hasMessageContaining("403 Forbidden reading EndpointSlices: the service account needs get, list and watch"
              + " on endpointslices in API group discovery.k8s.io in namespace shop")
          .hasMessageContaining("cannot list resource \"endpointslices\"");
      assertThat(((KubernetesApiException) catchCause(source)).statusCode()).isEqualTo(403);
      fake.forbid(false);
      Lists.await("ready after the grant", () -> source.whenReady().isDone()
          && !source.whenReady().isCompletedExceptionally());
      assertThat(Lists.ids(source.whenReady().get())).containsExactly("10.0.0.1:8080");
      assertThat(errors("forbidden")).isGreaterThanOrEqualTo(1);
    }
  }

  private static Throwable catchCause(KubernetesTargetSource source) {
    try {
      source.whenReady().get(20, TimeUnit.SECONDS);
      throw new AssertionError("ready");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void theTokenFileIsReadForEveryRequest_soARotatedTokenIsUsed(@TempDir Path dir) throws Exception {
    Path token = dir.resolve("token");
    Files.writeString(token, "token-one\n");
    fake.requireToken("token-one");
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    try (KubernetesTargetSource source = fast().tokenFile(token).build()) {
      source.whenReady().get(20, TimeUnit.SECONDS);
      Lists.await("a watch", () -> fake.openWatches() == 1);
      Files.writeString(token, "token-two\n"); // the kubelet rotates the bound token
      fake.requireToken("token-two");
      fake.endWatches();
      Lists.await("a watch with the new token", () -> fake.openWatches() == 1
          && watches().get(watches().size() - 1).authorization().equals("Bearer token-two"));
      assertThat(fake.requests()).extracting(FakeKubernetes.SeenRequest::status).doesNotContain(401);
    }
  }

  @Test
  void serverErrorsAndThrottling_areRetried_andCounted() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    fake.failNext(503, 2);
    try (KubernetesTargetSource source = fast().build()) {
      assertThat(Lists.ids(source.whenReady().get(20, TimeUnit.SECONDS))).containsExactly("10.0.0.1:8080");
      assertThat(errors("http_503")).isEqualTo(2);
      Lists.await("a watch", () -> fake.openWatches() == 1);
      fake.failNext(429, 1);
      fake.endWatches();
      Lists.await("a watch after Retry-After", () -> fake.openWatches() == 1
          && watches().stream().filter(r -> r.status() == 200).count() == 2);
      assertThat(watches()).extracting(FakeKubernetes.SeenRequest::status).containsExactly(200, 429, 200);
      assertThat(errors("throttled")).isEqualTo(1);
      assertThat(lists()).hasSize(3); // two 503s and one good list; the 429 was a watch, resumed
    }
  }

  @Test
  void eventsSplitAcrossChunks_areReadWhole() throws Exception {
    fake.splitEvents(true);
    try (KubernetesTargetSource source = fast().build(); Lists lists = new Lists(source)) {
      assertThat(source.whenReady().get(20, TimeUnit.SECONDS)).isEmpty();
      Lists.await("a watch", () -> fake.openWatches() == 1);
      fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1"),
          Endpoint.readyPod("10.0.0.2", "o-2", "z1")));
      lists.nextIds("10.0.0.1:8080", "10.0.0.2:8080");
      assertThat(errors("malformed_event")).isZero();
    }
  }

  @Test
  void aStalledWatch_isGivenUp_andResumed_withStalenessShownMeanwhile() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    fake.stallWatches(true);
    try (KubernetesTargetSource source = fast().watchTimeout(Duration.ofSeconds(1)).watchGrace(Duration.ofMillis(100))
        .build(); Lists lists = new Lists(source)) {
      source.whenReady().get(20, TimeUnit.SECONDS);
      TimeGauge staleness = registry.find("fairway.discovery.staleness").timeGauge();
      assertThat(staleness).isNotNull();
      Lists.await("a stall detected", () -> errors("stalled") >= 1);
      fake.stallWatches(false);
      fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.2", "o-2", "z1")));
      lists.nextIds("10.0.0.2:8080");
      Lists.await("a watch open", () -> staleness.value(TimeUnit.NANOSECONDS) == 0);
      assertThat(lists()).hasSize(1); // resumed, never relisted
    }
  }

  @Test
  void aMalformedSlice_keepsItsLastGoodVersion_andABadEndpointIsSkippedAlone() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1")));
    try (KubernetesTargetSource source = fast().build(); Lists lists = new Lists(source)) {
      source.whenReady().get(20, TimeUnit.SECONDS);
      Lists.await("a watch", () -> fake.openWatches() == 1);
      fake.apply(NS, slice("orders-b", Endpoint.readyPod("10.0.0.2", "o-2", "z1"), Endpoint.at("not-an-ip")));
      lists.nextIds("10.0.0.1:8080", "10.0.0.2:8080");
      assertThat(skipped("bad_address")).isEqualTo(1);

      var broken = new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
      broken.put("kind", "EndpointSlice");
      broken.putObject("metadata").put("name", "orders-a").putObject("labels")
          .put("kubernetes.io/service-name", "orders");
      broken.put("addressType", "IPv4");
      broken.put("endpoints", "not an array");
      fake.applyRaw(NS, broken);
      fake.apply(NS, slice("orders-c", Endpoint.readyPod("10.0.0.3", "o-3", "z1")));
      lists.nextIds("10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080");
      assertThat(skipped("malformed_slice")).isEqualTo(1);

      fake.apply(NS, EndpointSliceSpec.of("orders-f", "orders").addressType("FQDN").port("http", 8080)
          .endpoint(Endpoint.at("orders.example.com")));
      Lists.await("the FQDN slice counted", () -> skipped("fqdn") == 1);
      assertThat(Lists.ids(source.targets())).containsExactly("10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080");
    }
  }

  @Test
  void aRollingRestart_throughConditions() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1"),
        Endpoint.readyPod("10.0.0.2", "o-2", "z1")));
    try (KubernetesTargetSource source = fast().build(); Lists lists = new Lists(source)) {
      source.whenReady().get(20, TimeUnit.SECONDS);
      Lists.await("a watch", () -> fake.openWatches() == 1);
      fake.apply(NS, slice("orders-a", Endpoint.at("10.0.0.1").pod("o-1").conditions(false, true, true),
          Endpoint.readyPod("10.0.0.2", "o-2", "z1")));
      lists.nextIds("10.0.0.2:8080"); // terminating: no new calls while another is ready
      fake.apply(NS, slice("orders-a", Endpoint.at("10.0.0.1").pod("o-1").conditions(false, true, true),
          Endpoint.at("10.0.0.2").pod("o-2").conditions(false, true, true)));
      List<Target> fallback = lists.nextIds("10.0.0.1:8080", "10.0.0.2:8080"); // none ready: the fallback
      assertThat(fallback).allMatch(t -> "true".equals(t.metadata().get("terminating")));
      fake.apply(NS, slice("orders-a", Endpoint.at("10.0.0.2").pod("o-2").conditions(false, true, true),
          Endpoint.readyPod("10.0.0.3", "o-3", "z1")));
      lists.nextIds("10.0.0.3:8080");
    }
  }

  @Test
  void hintsFollowTheLocalZone_fromTheEnvironment() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1").forZones("z1"),
        Endpoint.readyPod("10.0.0.2", "o-2", "z1").forZones("z2")));
    try (KubernetesTargetSource source = KubernetesTargetSource.builder("orders")
        .environment(Map.of("FAIRWAY_LOCAL_ZONE", "z2")).apiServer(fake.url()).namespace(NS).build()) {
      assertThat(source.localZone()).isEqualTo("z2");
      List<Target> targets = source.whenReady().get(20, TimeUnit.SECONDS);
      assertThat(targets).extracting(Target::id, Target::zone).containsExactly(
          org.assertj.core.groups.Tuple.tuple("10.0.0.1:8080", "z1"),
          org.assertj.core.groups.Tuple.tuple("10.0.0.2:8080", "z2"));
    }
  }

  @Test
  void close_endsTheWatch_andUnregistersTheMeters() throws Exception {
    KubernetesTargetSource source = fast().build();
    source.whenReady().get(20, TimeUnit.SECONDS);
    Lists.await("a watch", () -> fake.openWatches() == 1);
    source.close();
    Lists.await("the watch closed", () -> fake.openWatches() == 0);
    assertThat(registry.find("fairway.discovery.staleness").timeGauge()).isNull();
    source.close(); // idempotent
  }
}
