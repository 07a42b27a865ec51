package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class AffinityHeadersTest {

  @Test
  void checkName_trimsAndRejectsBlankNullAndSeparators() {
    assertThat(AffinityHeaders.checkName("header", " X-User ")).isEqualTo("X-User");
    assertThatThrownBy(() -> AffinityHeaders.checkName("header", " "))
        .hasMessage("header: \" \" (expected: a non-blank header name)");
    assertThatThrownBy(() -> AffinityHeaders.checkName("cookie", null))
        .hasMessage("cookie: null (expected: a non-blank cookie name)");
    assertThatThrownBy(() -> AffinityHeaders.checkName("cookie", "a=b"))
        .hasMessage("cookie: \"a=b\" (expected: a non-blank cookie name)");
    assertThatThrownBy(() -> AffinityHeaders.checkName("cookie", "a;b"))
        .hasMessage("cookie: \"a;b\" (expected: a non-blank cookie name)");
  }

  @Test
  void emptyToNull_emptyIsNoKey() {
    assertThat(AffinityHeaders.emptyToNull("")).isNull();
    assertThat(AffinityHeaders.emptyToNull(null)).isNull();
    assertThat(AffinityHeaders.emptyToNull(" ")).isEqualTo(" ");
  }

  @Test
  void clientIp_firstForwardedHopThenRealIpThenNull() {
    assertThat(AffinityHeaders.clientIp(" 203.0.113.7 , 10.0.0.1", "10.9.9.9")).isEqualTo("203.0.113.7");
    assertThat(AffinityHeaders.clientIp("198.51.100.1", null)).isEqualTo("198.51.100.1");
    assertThat(AffinityHeaders.clientIp(" ,10.0.0.1", " 198.51.100.4 ")).isEqualTo("198.51.100.4");
    assertThat(AffinityHeaders.clientIp(null, "198.51.100.4")).isEqualTo("198.51.100.4");
    assertThat(AffinityHeaders.clientIp("", " ")).isNull();
    assertThat(AffinityHeaders.clientIp(null, null)).isNull();
  }

  @Test
  void cookieIn_readsOneHeader_nullWhenAbsent_emptyWhenValueless() {
    assertThat(AffinityHeaders.cookieIn("a=1; session=abc; b=2", "session")).isEqualTo("abc");
    assertThat(AffinityHeaders.cookieIn(" session = \"q-1\" ", "session")).isEqualTo("q-1");
    assertThat(AffinityHeaders.cookieIn("xsession=no; sessionx=no", "session")).isNull();
    assertThat(AffinityHeaders.cookieIn("session", "session")).isNull();
    assertThat(AffinityHeaders.cookieIn("session=", "session")).isEmpty();
    assertThat(AffinityHeaders.cookieIn("session=\"\"", "session")).isEmpty();
    assertThat(AffinityHeaders.cookieIn("", "session")).isNull();
  }

  @Test
  void cookieValue_firstHeaderNamingTheCookieWins_emptyIsNoKey() {
    assertThat(AffinityHeaders.cookieValue(List.of("a=1", "session=z"), "session")).isEqualTo("z");
    assertThat(AffinityHeaders.cookieValue(List.of("session=y", "session=z"), "session")).isEqualTo("y");
    // the first header that names it decides, even when its value is empty (lb-okhttp's behaviour)
    assertThat(AffinityHeaders.cookieValue(List.of("session=", "session=z"), "session")).isNull();
    assertThat(AffinityHeaders.cookieValue(List.of(), "session")).isNull();
  }
}
