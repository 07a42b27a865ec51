package dev.fairway.lb.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import dev.fairway.lb.internal.DiscoveryMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The list-watch loop on fake time with a scripted transport: exact requests, delays and metrics. */
class WatchLoopTest {
  private static final long S = TimeUnit.SECONDS.toNanos(1);
  private static final String LIST = "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices"
      + "?labelSelector=kubernetes.io%2Fservice-name%3Dorders";
  private static final String SLICE = "{\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":\"orders-a\","
      + "\"resourceVersion\":\"%s\"},\"addressType\":\"IPv4\",\"ports\":[{\"name\":\"http\",\"port\":8080}],"
      + "\"endpoints\":[{\"addresses\":[\"%s\"]}]}";

  private final ManualScheduler scheduler = new ManualScheduler();
  private final ScriptedApiHttp http = new ScriptedApiHttp();
  private final List<List<Target>> published = new ArrayList<>();
  private final List<String> errors = new ArrayList<>();
  private final List<KubernetesApiException> refusals = new ArrayList<>();
  /** random = 1.0: each backoff delay is its cap, and each watch's timeoutSeconds is twice the base. */
  private final SliceWatch watch = new SliceWatch(
      new SliceWatch.Settings("orders", "shop", PortChoice.named("http"), "", false, 30 * S, 300, 30 * S),
      http, scheduler, scheduler::nanoTime, () -> 1.0, new Backoff(S, 60 * S, () -> 1.0),
      new DiscoveryMetrics() {
        @Override
        public void error(String reason) {
          errors.add(reason);
        }
      },
      new SliceWatch.Sink() {
        @Override
        public void publish(List<Target> targets) {
          published.add(targets);
        }

        @Override
        public void refused(KubernetesApiException e) {
          refusals.add(e);
        }
      });

  private static ApiHttp.Reply list(String rv, String... slices) {
    return new ApiHttp.Reply(200, "{\"kind\":\"EndpointSliceList\",\"metadata\":{\"resourceVersion\":\"" + rv
        + "\"},\"items\":[" + String.join(",", slices) + "]}", null);
  }

  private static String status(int code, String reason) {
    return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"m\","
        + "\"reason\":\"" + reason + "\",\"code\":" + code + "}";
  }

  private void answerList(ApiHttp.Reply reply) {
    http.lastGet().reply().complete(reply);
    scheduler.runDue();
  }

  private void line(String line) {
    http.lastWatch().listener.line(line);
    scheduler.runDue();
  }

  private void startAndWatch() {
    watch.start();
    scheduler.runDue();
    answerList(list("100", SLICE.formatted("90", "10.0.0.1")));
    http.lastWatch().listener.opened();
    scheduler.runDue();
  }

  @Test
  void listErrors_backOffExponentially_thenTheWatchStartsFromTheListsVersion() {
    watch.start();
    scheduler.runDue();
    for (long expected : new long[] {1, 2, 4}) {
      answerList(new ApiHttp.Reply(503, status(503, "ServiceUnavailable"), null));
      assertThat(scheduler.pendingDelays()).containsExactly(expected * S);
      scheduler.advance(expected * S);
    }
    answerList(list("100", SLICE.formatted("90", "10.0.0.1")));
    assertThat(errors).containsExactly("http_503", "http_503", "http_503");
    assertThat(http.paths).containsExactly(LIST, LIST, LIST, LIST,
        LIST + "&watch=1&resourceVersion=100&allowWatchBookmarks=true&timeoutSeconds=600");
    assertThat(published).hasSize(1);
    assertThat(published.get(0)).extracting(Target::id).containsExactly("10.0.0.1:8080");
    // the stall deadline: timeoutSeconds plus the grace, nothing else waits
    assertThat(scheduler.pendingDelays()).containsExactly(630 * S);
  }

  @Test
  void aBookmarkMovesTheResumePoint_andANormalEndResumesAtOnce() {
    startAndWatch();
    scheduler.advance(5 * S);
    line("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"EndpointSlice\",\"metadata\":{\"resourceVersion\":\"140\"}}}");
    http.lastWatch().listener.ended(null);
    scheduler.runDue();
    assertThat(http.watches).hasSize(2);
    assertThat(http.lastWatch().path).contains("&resourceVersion=140&");
    assertThat(published).hasSize(1); // a bookmark changes nothing
    assertThat(errors).isEmpty();
  }

  @Test
  void gone_asAnErrorEvent_listsAgainAtOnce_keepingTheList_andTheStreamIsClosed() {
    startAndWatch();
    ScriptedApiHttp.Watch first = http.lastWatch();
    line("{\"type\":\"ERROR\",\"object\":" + status(410, "Expired") + "}");
    assertThat(first.cancelled).isTrue();
    assertThat(http.paths.get(http.paths.size() - 1)).isEqualTo(LIST);
    assertThat(errors).containsExactly("gone");
    assertThat(published).hasSize(1); // nothing was withdrawn meanwhile
    answerList(list("200", SLICE.formatted("190", "10.0.0.2")));
    assertThat(published.get(1)).extracting(Target::id).containsExactly("10.0.0.2:8080");
    assertThat(http.lastWatch().path).contains("&resourceVersion=200&");
  }

  @Test
  void aStalledWatch_isCancelledAtItsDeadline_andResumedAfterABackoff() {
    startAndWatch();
    ScriptedApiHttp.Watch first = http.lastWatch();
    assertThat(watch.stalenessNanos()).isZero();
    scheduler.advance(630 * S - 1);
    assertThat(first.cancelled).isFalse();
    scheduler.advance(1);
    assertThat(first.cancelled).isTrue();
    assertThat(errors).containsExactly("stalled");
    assertThat(scheduler.pendingDelays()).containsExactly(S);
    assertThat(watch.stalenessNanos()).isEqualTo(630 * S); // confirmed last when the watch opened
    scheduler.advance(S);
    assertThat(http.watches).hasSize(2);
    assertThat(http.lastWatch().path).contains("&resourceVersion=100&");
  }

  @Test
  void tooManyRequests_waitsForRetryAfter_whenLongerThanTheBackoff() {
    startAndWatch();
    http.lastWatch().listener.ended(null); // the server's timeout... too early: counts as closed early
    scheduler.runDue();
    assertThat(errors).containsExactly("watch_closed_early");
    scheduler.advance(S);
    http.lastWatch().listener.refused(new ApiHttp.Reply(429, status(429, "TooManyRequests"), "7"));
    scheduler.runDue();
    assertThat(errors).containsExactly("watch_closed_early", "throttled");
    assertThat(scheduler.pendingDelays()).containsExactly(7 * S);
    scheduler.advance(7 * S);
    assertThat(http.watches).hasSize(3);
  }

  @Test
  void forbidden_isReportedWithThePermission_andRetried() {
    watch.start();
    scheduler.runDue();
    answerList(new ApiHttp.Reply(403, status(403, "Forbidden"), null));
    assertThat(refusals).hasSize(1);
    assertThat(refusals.get(0).statusCode()).isEqualTo(403);
    assertThat(refusals.get(0).reason()).isEqualTo("Forbidden");
    assertThat(refusals.get(0)).hasMessage("orders: 403 Forbidden reading EndpointSlices: the service account needs"
        + " get, list and watch on endpointslices in API group discovery.k8s.io in namespace shop (a Role and a"
        + " RoleBinding); the API server said: m");
    assertThat(scheduler.pendingDelays()).containsExactly(S);
    scheduler.advance(S);
    assertThat(http.gets).hasSize(2);
  }

  @Test
  void anUnreadableEvent_leadsToANewList_afterABackoff() {
    startAndWatch();
    line("{\"type\":\"MODIFIED\",\"object\":");
    assertThat(errors).containsExactly("malformed_event");
    assertThat(http.lastWatch().cancelled).isTrue();
    assertThat(scheduler.pendingDelays()).containsExactly(S);
    scheduler.advance(S);
    assertThat(http.paths.get(http.paths.size() - 1)).isEqualTo(LIST);
  }

  @Test
  void lateLinesOfACancelledWatch_areDropped() {
    startAndWatch();
    ScriptedApiHttp.Watch first = http.lastWatch();
    line("{\"type\":\"ERROR\",\"object\":" + status(410, "Expired") + "}");
    first.listener.line("{\"type\":\"ADDED\",\"object\":" + SLICE.formatted("300", "10.0.0.9") + "}");
    scheduler.runDue();
    assertThat(published).hasSize(1);
  }
}
