// main.cpp — the browser host of the calculator: WebGL2 context, the Dear ImGui platform layer on
// Emscripten's HTML5 events (CSS pixels in, devicePixelRatio-sized backing store out), the main
// loop that draws only when something changed, and the bridge to the page's JavaScript (URL
// hash, clipboard, downloads, the Hugging Face fetch, the aria-live mirror and the DOM form, the
// hidden text input that brings up a phone's keyboard, touch). The app itself is ui/ (no emscripten there).
#include <emscripten.h>
#include <emscripten/html5.h>
#include <GLES3/gl3.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "app.h"
#include "backends/imgui_impl_opengl3.h"
#include "imgui.h"

extern const unsigned char meshfit_font_data[];  // Roboto Regular (fonts-roboto-unhinted), generated at build
extern const unsigned int meshfit_font_size;

namespace {

using meshfit::ui::AppState;

// Milliseconds of layout search per animation frame, and how often its progress is shown. Drawing
// the whole page costs more than a slice (100-600 ms with software WebGL under load: the outliers
// of the crafted-link responsiveness test), so while only the progress changes no frame is drawn:
// the shell shows the percentage in a DOM status line, and the page answers input between slices.
constexpr double kSearchSliceMs = 8;
constexpr double kProgressShownMs = 250;

// [SECTION] JavaScript side (functions defined in shell.html's script)

EM_JS(void, js_set_clipboard, (const char* text), { meshfitShell.setClipboard(UTF8ToString(text)); });
EM_JS(void, js_download, (const char* name, const char* mime, const char* text),
      { meshfitShell.download(UTF8ToString(name), UTF8ToString(mime), UTF8ToString(text)); });
EM_JS(void, js_open_docs, (), { meshfitShell.openDocs(); });
EM_JS(void, js_search_progress, (double fraction), { meshfitShell.searchProgress(fraction); });
EM_JS(void, js_fetch_config, (const char* url), { meshfitShell.fetchConfig(UTF8ToString(url)); });
EM_JS(int, js_docs_open, (), { return meshfitShell.docsOpen() ? 1 : 0; });
EM_JS(void, js_update_mirror, (const char* mirror, const char* rects), {
  meshfitShell.updateMirror(UTF8ToString(mirror), UTF8ToString(rects));
});
EM_JS(void, js_first_frame, (), { meshfitShell.firstFrame(); });
EM_JS(double, js_font_size_px, (), { return meshfitShell.fontSizePx(); });
EM_JS(void, js_text_input, (int want, int numeric, float x, float y, float height),
      { meshfitShell.textInput(want !== 0, numeric !== 0, x, y, height); });
EM_JS(int, js_dom_field_focused, (), { return meshfitShell.domFieldFocused() ? 1 : 0; });

// [SECTION] Host state

struct Host {
  AppState app;
  EMSCRIPTEN_WEBGL_CONTEXT_HANDLE gl = 0;
  double css_width = 0, css_height = 0, dpr = 1;
  double font_dpr = 0;              // the ratio the font atlas was built for
  std::string font_user_text;       // the user's text the atlas was built for (its letters beyond Latin-1)
  std::vector<ImWchar> font_ranges; // the atlas's glyph ranges (ImGui keeps a pointer to them)
  int frames_to_draw = 3;           // draw while > 0; events set it again
  bool context_lost = false;
  bool first_frame_done = false;
  int64_t mirrored_version = -1;
  std::string clipboard;            // ImGui's clipboard: last copied or pasted text
  int pending_paste_frames = 0;
  double progress_shown_ms = 0;     // when the status line last showed a running search's progress
  bool progress_visible = false;    // the status line is shown (hidden again when no search runs)
  // One finger on the canvas: a tap clicks where it lifts, a drag scrolls what is under it.
  int touch_id = -1;                // the finger followed (others are ignored)
  double touch_start_x = 0, touch_start_y = 0, touch_last_x = 0, touch_last_y = 0;
  bool touch_dragged = false;
  int64_t last_geometry = 0;        // the last frame's vertex and index counts (settling tables)
  int settle_frames = 0;            // frames drawn in a row because the geometry still changed
};

constexpr int kSettleFrames = 8;

Host& host() {
  static Host instance;  // the one host of this page (the emscripten main loop has no other owner)
  return instance;
}

void wake(int frames = 3) { host().frames_to_draw = std::max(host().frames_to_draw, frames); }

// [SECTION] Canvas size and fonts

void resize_canvas() {
  Host& h = host();
  emscripten_get_element_css_size("#canvas", &h.css_width, &h.css_height);
  h.dpr = emscripten_get_device_pixel_ratio();
  emscripten_set_canvas_element_size("#canvas", int(std::lround(h.css_width * h.dpr)), int(std::lround(h.css_height * h.dpr)));
  wake();
}

// Roboto has no U+2192, which the "what moved" line uses ("pp 4 → 6"): draw it into the atlas.
void add_arrow_glyph(ImFont* font, float size) {
  ImGuiIO& io = ImGui::GetIO();
  const int width = int(std::ceil(size * 0.75f)), height = int(std::ceil(size));
  const int id = io.Fonts->AddCustomRectFontGlyph(font, 0x2192, width, height, float(width) + size * 0.1f, ImVec2(size * 0.05f, 0));
  io.Fonts->Build();
  unsigned char* pixels = nullptr;
  int atlas_width = 0, atlas_height = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &atlas_width, &atlas_height);
  const ImFontAtlasCustomRect* rect = io.Fonts->GetCustomRectByIndex(id);
  const float mid = size * 0.58f, half = size * 0.045f + 0.5f, head = width * 0.42f;
  const auto distance = [](float px, float py, float ax, float ay, float bx, float by) {
    const float dx = bx - ax, dy = by - ay;
    const float t = std::fmax(0.0f, std::fmin(1.0f, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
    return std::hypot(px - ax - t * dx, py - ay - t * dy);
  };
  const float tip = float(width) - half;
  for (int y = 0; y < rect->Height; ++y)
    for (int x = 0; x < rect->Width; ++x) {
      const float px = x + 0.5f, py = y + 0.5f;
      const float d = std::fmin(distance(px, py, half, mid, tip, mid),
                                std::fmin(distance(px, py, tip - head, mid - head, tip, mid),
                                          distance(px, py, tip - head, mid + head, tip, mid)));
      const float alpha = std::fmax(0.0f, std::fmin(1.0f, half + 0.5f - d));
      unsigned char* p = pixels + 4 * ((rect->Y + y) * atlas_width + rect->X + x);
      p[0] = p[1] = p[2] = 255;
      p[3] = (unsigned char)(alpha * 255.0f);
    }
}

// Text the user typed or a link carried, drawn by the page: its letters beyond Latin-1 (a run named
// in Greek, Cyrillic or Polish) get glyphs too. An as-a-user review saw such names drawn as "?".
// Short fields only: this is read every drawn frame, and a pasted config.json (up to 1 MiB, its
// keys ASCII) would be copied and compared each time.
std::string user_text(const AppState& s) {
  return s.config.name + '\n' + s.config.notes + '\n' + s.pin_config.name + '\n' + s.pin_config.notes + '\n' +
         s.hf_fetch.id + '\n' + s.layout_filter;
}

// Latin-1, the dashes and comparison signs the messages use, U+FFFD (ImGui's fallback when present:
// a glyph the font lacks, CJK or emoji, shows as the replacement mark rather than a literal "?"),
// and the letters of the user's text that the font has (stb_truetype skips the rest).
std::vector<ImWchar> glyph_ranges(const std::string& text) {
  static const ImWchar base[] = {0x0020, 0x00FF, 0x2010, 0x2027, 0x2264, 0x2265, 0xFFFD, 0xFFFD, 0};
  ImFontGlyphRangesBuilder builder;
  builder.AddRanges(base);
  builder.AddText(text.c_str());
  ImVector<ImWchar> built;
  builder.BuildRanges(&built);
  return std::vector<ImWchar>(built.begin(), built.end());
}

void rebuild_fonts_if_needed() {
  Host& h = host();
  std::string text = user_text(h.app);
  if (h.font_dpr == h.dpr && text == h.font_user_text) return;
  std::vector<ImWchar> ranges = glyph_ranges(text);
  h.font_user_text = std::move(text);
  if (h.font_dpr == h.dpr && ranges == h.font_ranges) return;  // no new letter: the same atlas
  h.font_dpr = h.dpr;
  h.font_ranges = std::move(ranges);
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ImFontConfig config;
  config.FontDataOwnedByAtlas = false;
  config.OversampleH = 2;
  config.OversampleV = 1;
  // Rasterise at the physical size so text is crisp at any devicePixelRatio; draw at 1/dpr.
  const float size = float(h.app.em * h.dpr);
  ImFont* font = io.Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(meshfit_font_data), int(meshfit_font_size),
                                                size, &config, h.font_ranges.data());
  add_arrow_glyph(font, size);
  io.FontGlobalScale = float(1.0 / h.dpr);
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
}

// [SECTION] Input events (CSS pixels, as ImGui's DisplaySize)

ImGuiKey key_from_code(const char* code) {
  struct Entry { const char* code; ImGuiKey key; };
  static const Entry table[] = {
      {"Tab", ImGuiKey_Tab}, {"ArrowLeft", ImGuiKey_LeftArrow}, {"ArrowRight", ImGuiKey_RightArrow},
      {"ArrowUp", ImGuiKey_UpArrow}, {"ArrowDown", ImGuiKey_DownArrow}, {"PageUp", ImGuiKey_PageUp},
      {"PageDown", ImGuiKey_PageDown}, {"Home", ImGuiKey_Home}, {"End", ImGuiKey_End}, {"Insert", ImGuiKey_Insert},
      {"Delete", ImGuiKey_Delete}, {"Backspace", ImGuiKey_Backspace}, {"Space", ImGuiKey_Space},
      {"Enter", ImGuiKey_Enter}, {"NumpadEnter", ImGuiKey_KeypadEnter}, {"Escape", ImGuiKey_Escape},
      {"ControlLeft", ImGuiKey_LeftCtrl}, {"ControlRight", ImGuiKey_RightCtrl}, {"ShiftLeft", ImGuiKey_LeftShift},
      {"ShiftRight", ImGuiKey_RightShift}, {"AltLeft", ImGuiKey_LeftAlt}, {"AltRight", ImGuiKey_RightAlt},
      {"MetaLeft", ImGuiKey_LeftSuper}, {"MetaRight", ImGuiKey_RightSuper}, {"KeyA", ImGuiKey_A},
      {"KeyC", ImGuiKey_C}, {"KeyV", ImGuiKey_V}, {"KeyX", ImGuiKey_X}, {"KeyY", ImGuiKey_Y}, {"KeyZ", ImGuiKey_Z}};
  for (const Entry& entry : table)
    if (std::strcmp(code, entry.code) == 0) return entry.key;
  return ImGuiKey_None;
}

bool single_codepoint(const char* text) {
  const unsigned char first = static_cast<unsigned char>(text[0]);
  if (first == 0) return false;
  const size_t length = first < 0x80 ? 1 : first < 0xE0 ? 2 : first < 0xF0 ? 3 : 4;
  return std::strlen(text) == length;
}

EM_BOOL on_key(int type, const EmscriptenKeyboardEvent* e, void*) {
  if (js_docs_open()) return false;  // the formulas page is over the canvas: its keys are the browser's
  // Keys for the DOM form (a keyboard or screen-reader user in a real <input>) are the browser's.
  if (js_dom_field_focused()) return false;
  // An IME composing, or a phone keyboard (key "Unidentified", keyCode 229): its text comes by the
  // hidden input's input/composition events (shell.html -> meshfit_text), not here.
  if (e->keyCode == 229 || std::strcmp(e->key, "Process") == 0 || std::strcmp(e->key, "Unidentified") == 0) return false;
  ImGuiIO& io = ImGui::GetIO();
  // Tab moves the browser's focus (canvas -> DOM form fields) unless a canvas text field is being
  // edited, where it moves to the next field as in any form.
  if (std::strcmp(e->key, "Tab") == 0 && !io.WantTextInput) return false;
  const bool down = type == EMSCRIPTEN_EVENT_KEYDOWN;
  io.AddKeyEvent(ImGuiMod_Ctrl, e->ctrlKey || e->metaKey);
  io.AddKeyEvent(ImGuiMod_Shift, e->shiftKey);
  io.AddKeyEvent(ImGuiMod_Alt, e->altKey);
  wake();
  const bool command = e->ctrlKey || e->metaKey;
  // Ctrl+V is left to the browser: its paste event brings the text (shell.html -> meshfit_paste).
  if (command && std::strcmp(e->code, "KeyV") == 0) return false;
  // Some phone keyboards send no code: read the key name instead (same names for these keys).
  const ImGuiKey key = key_from_code(e->code[0] != 0 ? e->code : e->key);
  if (key != ImGuiKey_None) io.AddKeyEvent(key, down);
  if (down && !command && single_codepoint(e->key)) io.AddInputCharactersUTF8(e->key);
  // Keep Tab, arrows and Backspace for the app while it has focus; let browser shortcuts through.
  return io.WantCaptureKeyboard && !command;
}

EM_BOOL on_mouse(int type, const EmscriptenMouseEvent* e, void*) {
  ImGuiIO& io = ImGui::GetIO();
  io.AddMousePosEvent(float(e->targetX), float(e->targetY));
  if (type == EMSCRIPTEN_EVENT_MOUSEDOWN || type == EMSCRIPTEN_EVENT_MOUSEUP) {
    const int button = e->button == 0 ? 0 : e->button == 2 ? 1 : 2;
    io.AddMouseButtonEvent(button, type == EMSCRIPTEN_EVENT_MOUSEDOWN);
  }
  wake();
  return type != EMSCRIPTEN_EVENT_MOUSEMOVE;
}

EM_BOOL on_leave(int, const EmscriptenMouseEvent*, void*) {
  ImGui::GetIO().AddMousePosEvent(-FLT_MAX, -FLT_MAX);
  wake();
  return false;
}

EM_BOOL on_wheel(int, const EmscriptenWheelEvent* e, void*) {
  // Pixels (deltaMode 0) to ImGui's "lines"; lines and pages as they are.
  const double scale = e->deltaMode == DOM_DELTA_PIXEL ? 1.0 / 100.0 : 1.0;
  ImGui::GetIO().AddMouseWheelEvent(float(-e->deltaX * scale), float(-e->deltaY * scale));
  wake();
  return true;
}

// Touch (phones, tablets): the browser's own scrolling and compatibility mouse events are off for
// the canvas (preventDefault), so one tap is one click and a drag scrolls the panel, list or table
// under the finger as the mouse wheel does (ImGui's wheel step: 5 lines down, 2 across).
EM_BOOL on_touch(int type, const EmscriptenTouchEvent* e, void*) {
  Host& h = host();
  ImGuiIO& io = ImGui::GetIO();
  const EmscriptenTouchPoint* point = nullptr;
  for (int i = 0; i < e->numTouches; ++i)
    if (e->touches[i].isChanged && (h.touch_id < 0 || e->touches[i].identifier == h.touch_id)) point = &e->touches[i];
  if (point == nullptr) return true;
  const double x = double(point->targetX), y = double(point->targetY);
  io.AddMouseSourceEvent(ImGuiMouseSource_TouchScreen);
  if (type == EMSCRIPTEN_EVENT_TOUCHSTART) {
    if (h.touch_id >= 0) return true;  // a second finger: ignored
    h.touch_id = point->identifier;
    h.touch_start_x = h.touch_last_x = x;
    h.touch_start_y = h.touch_last_y = y;
    h.touch_dragged = false;
    io.AddMousePosEvent(float(x), float(y));  // hover, so the wheel goes to what is under the finger
  } else if (type == EMSCRIPTEN_EVENT_TOUCHMOVE) {
    // Past a few pixels it is a drag, not a tap (about a finger's wobble: 0.5 em).
    if (std::hypot(x - h.touch_start_x, y - h.touch_start_y) > 0.5 * h.app.em) h.touch_dragged = true;
    if (h.touch_dragged) {
      const double line = h.app.em;
      io.AddMouseWheelEvent(float((x - h.touch_last_x) / (2 * line)), float((y - h.touch_last_y) / (5 * line)));
      h.touch_last_x = x;
      h.touch_last_y = y;
    }
  } else {
    if (type == EMSCRIPTEN_EVENT_TOUCHEND && !h.touch_dragged) {
      io.AddMousePosEvent(float(x), float(y));
      io.AddMouseButtonEvent(0, true);
      io.AddMouseButtonEvent(0, false);  // the queue gives them separate frames
    }
    io.AddMousePosEvent(-FLT_MAX, -FLT_MAX);  // a lifted finger hovers nothing
    h.touch_id = -1;
  }
  wake(6);
  return true;
}

EM_BOOL on_resize(int, const EmscriptenUiEvent*, void*) {
  resize_canvas();
  return false;
}

EM_BOOL on_focus(int type, const EmscriptenFocusEvent* e, void*) {
  // The page's own focus moves (canvas <-> hidden text input <-> DOM form) are not the app losing
  // focus: only the window's own events are (captured element events name their node).
  if (e->nodeName[0] != 0 && std::strcmp(e->nodeName, "#window") != 0) return false;
  ImGui::GetIO().AddFocusEvent(type == EMSCRIPTEN_EVENT_FOCUS);
  wake();
  return false;
}

EM_BOOL on_context_lost(int, const void*, void*) {
  host().context_lost = true;
  return true;  // preventDefault: ask the browser to restore it
}

EM_BOOL on_context_restored(int, const void*, void*) {
  Host& h = host();
  emscripten_webgl_make_context_current(h.gl);
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplOpenGL3_Init("#version 300 es");
  h.font_dpr = 0;  // rebuild the atlas texture
  h.context_lost = false;
  wake();
  return true;
}

// [SECTION] Text input: a hidden DOM <input> while ImGui edits text (phone keyboards, IME)

// Called by ImGui when its text cursor appears, moves or goes (io.SetPlatformImeDataFn): the page
// focuses its hidden input there (numeric keyboard for numbers) or gives the focus back.
void set_ime_data(ImGuiViewport*, ImGuiPlatformImeData* data) {
  js_text_input(data->WantVisible ? 1 : 0, host().app.text_field_numeric ? 1 : 0, data->InputPos.x, data->InputPos.y,
                data->InputLineHeight);
}

// [SECTION] Clipboard (ImGui <-> navigator.clipboard / paste events)

const char* get_clipboard(void*) { return host().clipboard.c_str(); }
void set_clipboard(void*, const char* text) {
  host().clipboard = text;
  js_set_clipboard(text);
}

// [SECTION] Frame

void frame(void*) {
  Host& h = host();
  if (h.context_lost) return;
  if (h.dpr != emscripten_get_device_pixel_ratio()) resize_canvas();  // zoom or a move to another screen
  // A running layout search advances one slice per animation frame (the page answers input in
  // between); only its progress changed: the status line shows it a few times a second, no frame.
  if (meshfit::ui::search_running(h.app)) {
    if (!meshfit::ui::step_search(h.app, kSearchSliceMs)) {
      wake();  // done: draw the result
    } else {
      const double now_ms = emscripten_get_now();
      if (now_ms - h.progress_shown_ms >= kProgressShownMs) {
        h.progress_shown_ms = now_ms;
        h.progress_visible = true;
        js_search_progress(h.app.running_search->progress());
      }
      if (h.frames_to_draw <= 0 && !h.app.dirty) return;
    }
  }
  if (h.progress_visible && !meshfit::ui::search_running(h.app)) {  // done or cancelled
    h.progress_visible = false;
    js_search_progress(-1);
  }
  if (h.frames_to_draw <= 0 && !h.app.dirty) return;  // idle: nothing changed
  --h.frames_to_draw;
  rebuild_fonts_if_needed();

  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(float(h.css_width), float(h.css_height));
  io.DisplayFramebufferScale = ImVec2(float(h.dpr), float(h.dpr));
  const double now = emscripten_get_now() / 1000.0;
  static double last = now;  // frame clock of the one main loop
  io.DeltaTime = float(std::max(1e-4, now - last));
  last = now;

  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  h.app.widget_rects.clear();
  meshfit::ui::draw(h.app);
  if (h.app.dirty) meshfit::ui::recompute(h.app);  // a click this frame: results before the next draw
  ImGui::Render();
  glViewport(0, 0, int(std::lround(h.css_width * h.dpr)), int(std::lround(h.css_height * h.dpr)));
  const ImVec4 clear = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(clear.x, clear.y, clear.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  // Tables settle their column widths and scrollbars a frame or two after their content: while the
  // frame's geometry still changes, draw one more (an as-a-user review saw the Validation table's
  // scrollbar appear only after the mouse moved). A settled frame ends it; at most kSettleFrames.
  const ImDrawData* drawn = ImGui::GetDrawData();
  const int64_t geometry = int64_t(drawn->TotalVtxCount) * 1000003 + drawn->TotalIdxCount;
  if (geometry != h.last_geometry && h.settle_frames < kSettleFrames) {
    ++h.settle_frames;
    wake(1);
  } else if (geometry == h.last_geometry) {
    h.settle_frames = 0;
  }
  h.last_geometry = geometry;

  meshfit::ui::Outbox& out = h.app.outbox;
  if (!out.clipboard.empty()) {
    js_set_clipboard(out.clipboard.c_str());
    out.clipboard.clear();
  }
  if (!out.download_text.empty()) {
    js_download(out.download_name.c_str(), out.download_mime.c_str(), out.download_text.c_str());
    out.download_text.clear();
  }
  if (out.open_docs) {
    js_open_docs();
    out.open_docs = false;
  }
  if (!out.fetch_url.empty()) {
    js_fetch_config(out.fetch_url.c_str());  // answered by meshfit_fetched
    out.fetch_url.clear();
  }
  // The mirror follows the results; widget positions follow layout changes (sent with it).
  std::string rects = "{";
  for (const auto& [name, r] : h.app.widget_rects) {
    char entry[160];
    std::snprintf(entry, sizeof entry, "%s\"%s\":[%.1f,%.1f,%.1f,%.1f]", rects.size() > 1 ? "," : "", name.c_str(), r.x, r.y,
                  r.w, r.h);
    rects += entry;
  }
  rects += "}";
  js_update_mirror(h.mirrored_version != h.app.mirror_version ? h.app.mirror.c_str() : "", rects.c_str());
  h.mirrored_version = h.app.mirror_version;
  // An active text field blinks its cursor: keep drawing slowly while one is active.
  if (ImGui::IsAnyItemActive()) wake(1);
  if (!h.first_frame_done) {
    h.first_frame_done = true;
    js_first_frame();
  }
}

}  // namespace

// [SECTION] Entry points called from the page's JavaScript

extern "C" {

EMSCRIPTEN_KEEPALIVE void meshfit_set_state(const char* state) {
  meshfit::ui::set_state(host().app, state);
  wake();
}

EMSCRIPTEN_KEEPALIVE void meshfit_set_theme(int dark) {
  host().app.dark = dark != 0;
  meshfit::ui::apply_theme(host().app);
  wake();
}

EMSCRIPTEN_KEEPALIVE void meshfit_paste(const char* text) {
  host().clipboard = text;
  // Replay Ctrl+V for ImGui now that the text is here (the queue trickles one change per frame).
  ImGuiIO& io = ImGui::GetIO();
  io.AddKeyEvent(ImGuiMod_Ctrl, true);
  io.AddKeyEvent(ImGuiKey_V, true);
  io.AddKeyEvent(ImGuiKey_V, false);
  io.AddKeyEvent(ImGuiMod_Ctrl, false);
  wake(6);
}

// The answer to a fetch the app asked for (HTTP status, 0 = none; the body as text).
EMSCRIPTEN_KEEPALIVE void meshfit_fetched(int status, const char* body) {
  meshfit::ui::fetched_hf_config(host().app, status, body);
  wake();
}

EMSCRIPTEN_KEEPALIVE void meshfit_wake() { wake(); }

// Text from the hidden input (a phone keyboard, an IME's composed text), for the active field.
EMSCRIPTEN_KEEPALIVE void meshfit_text(const char* text) {
  ImGui::GetIO().AddInputCharactersUTF8(text);
  wake();
}

// A phone keyboard's delete (an input event, not a key event).
EMSCRIPTEN_KEEPALIVE void meshfit_backspace() {
  ImGuiIO& io = ImGui::GetIO();
  io.AddKeyEvent(ImGuiKey_Backspace, true);
  io.AddKeyEvent(ImGuiKey_Backspace, false);
  wake();
}

// The DOM form (shell.html): a field changed there, or got the focus (bring it into view).
EMSCRIPTEN_KEEPALIVE void meshfit_set_field(const char* field, const char* text) {
  meshfit::ui::set_form_field(host().app, field, text);
  wake();
}

EMSCRIPTEN_KEEPALIVE void meshfit_focus_field(const char* field) {
  host().app.focus_field = field;
  wake();
}

// A coarse pointer (touch screen): larger hit targets.
EMSCRIPTEN_KEEPALIVE void meshfit_set_coarse_pointer(int coarse) {
  host().app.coarse_pointer = coarse != 0;
  meshfit::ui::apply_theme(host().app);
  wake();
}

EMSCRIPTEN_KEEPALIVE void meshfit_resize() { resize_canvas(); }

}  // extern "C"

int main() {
  Host& h = host();
  EmscriptenWebGLContextAttributes attributes;
  emscripten_webgl_init_context_attributes(&attributes);
  attributes.majorVersion = 2;
  attributes.minorVersion = 0;
  attributes.alpha = false;
  attributes.antialias = false;
  attributes.preserveDrawingBuffer = false;
  h.gl = emscripten_webgl_create_context("#canvas", &attributes);
  if (h.gl <= 0) {
    EM_ASM({ meshfitShell.fail("This page needs WebGL2, which this browser did not provide."); });
    return 1;
  }
  emscripten_webgl_make_context_current(h.gl);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  io.BackendPlatformName = "meshfit_html5";
  io.SetClipboardTextFn = set_clipboard;
  io.GetClipboardTextFn = get_clipboard;
  io.SetPlatformImeDataFn = set_ime_data;
  ImGui_ImplOpenGL3_Init("#version 300 es");

  h.app.em = float(js_font_size_px());
  h.app.public_url = MESHFIT_PUBLIC_URL;  // build setting; empty: links use the page's own address
  h.app.local_file = EM_ASM_INT({ return location.protocol === 'file:' ? 1 : 0; }) != 0;
  EM_ASM({ meshfitShell.setPublicUrl(UTF8ToString($0)); }, MESHFIT_PUBLIC_URL);
  meshfit::ui::init(h.app);
  meshfit::ui::apply_theme(h.app);
  resize_canvas();

  emscripten_set_keydown_callback(EMSCRIPTEN_EVENT_TARGET_WINDOW, nullptr, true, on_key);
  emscripten_set_keyup_callback(EMSCRIPTEN_EVENT_TARGET_WINDOW, nullptr, true, on_key);
  emscripten_set_mousemove_callback("#canvas", nullptr, true, on_mouse);
  emscripten_set_mousedown_callback("#canvas", nullptr, true, on_mouse);
  emscripten_set_mouseup_callback(EMSCRIPTEN_EVENT_TARGET_WINDOW, nullptr, true, on_mouse);
  emscripten_set_mouseleave_callback("#canvas", nullptr, true, on_leave);
  emscripten_set_wheel_callback("#canvas", nullptr, true, on_wheel);
  emscripten_set_touchstart_callback("#canvas", nullptr, true, on_touch);
  emscripten_set_touchmove_callback("#canvas", nullptr, true, on_touch);
  emscripten_set_touchend_callback("#canvas", nullptr, true, on_touch);
  emscripten_set_touchcancel_callback("#canvas", nullptr, true, on_touch);
  emscripten_set_resize_callback(EMSCRIPTEN_EVENT_TARGET_WINDOW, nullptr, true, on_resize);
  emscripten_set_focus_callback(EMSCRIPTEN_EVENT_TARGET_WINDOW, nullptr, true, on_focus);
  emscripten_set_blur_callback(EMSCRIPTEN_EVENT_TARGET_WINDOW, nullptr, true, on_focus);
  emscripten_set_webglcontextlost_callback("#canvas", nullptr, true,
                                           on_context_lost);
  emscripten_set_webglcontextrestored_callback("#canvas", nullptr, true,
                                               on_context_restored);
  EM_ASM({ meshfitShell.started(); });  // applies the URL hash and the colour scheme
  emscripten_set_main_loop_arg(frame, nullptr, 0, false);
  return 0;
}
