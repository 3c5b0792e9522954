;;; quickfill.el --- quickfill code completion through eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: languages, tools, convenience

;;; Commentary:

;; Registers the quickfill language server (`quickfill --stdio') with eglot,
;; so that `completion-at-point' (and company or corfu, which read the same
;; completion-at-point functions) offer the completions of a local GGUF model.
;;
;;   (add-to-list 'load-path "/path/to/quickfill/editors/emacs")
;;   (require 'quickfill)
;;   (setq quickfill-model "~/models/quickfill-tiny-code.gguf")
;;   (quickfill-eglot-setup)                  ; register with eglot
;;   (add-hook 'python-mode-hook #'eglot-ensure)
;;
;; Trust (docs/security.md): the model, the program and the log file are on
;; the server's command line, which only your init file sets; the settings
;; object carries no file path.  A repository's .dir-locals.el can set
;; `eglot-workspace-configuration' without a prompt, and eglot sends it to
;; the server with workspace/didChangeConfiguration: the server ignores the
;; privileged keys in it (remote sources, API keys, the audit log, model
;; paths: they come from ~/.config/quickfill/config.json only) and says so.
;; The quickfill-* variables are marked risky, so a file or directory local
;; setting of them is never applied without asking.
;;
;; Design: a subclass of `eglot-lsp-server' carries the settings.  Its
;; `eglot-initialization-options' method sends {"quickfill": {...}} built from
;; the quickfill-* variables, it answers workspace/configuration for the
;; "quickfill" section with the same object, and `quickfill-update-settings'
;; re-sends it with workspace/didChangeConfiguration.  `quickfill-dashboard'
;; writes the server's dashboard page (quickfill/report) to an HTML file and
;; opens it in the browser.  `quickfill-doctor' runs `quickfill doctor' (the
;; same program and model) and shows its report in *quickfill doctor*.
;; `quickfill-explain'
;; shows quickfill/explainCompletion at point (the prompt a completion there
;; would give the model) in *quickfill-explain*.  `quickfill-complete' inserts
;; the first of an explicit textDocument/inlineCompletion's items (the server
;; returns several candidates, best first); right after it, M-] and M-[
;; (`quickfill-cycle-map') replace it by the next or previous one.  What is
;; shown and accepted (completion items, inline suggestions, next edits) is
;; reported to the server's acceptance counts.  Works with Debian's
;; elpa-eglot 1.9 on Emacs 28 and with the eglot built into Emacs 29+.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)

(defgroup quickfill nil
  "Local AI code completion through the quickfill language server."
  :group 'tools
  :prefix "quickfill-")

(defcustom quickfill-program "quickfill"
  "The quickfill binary: a bare name is looked up on `exec-path'."
  :type 'string)

(defcustom quickfill-model nil
  "GGUF model file for the server (--model), or nil for the server's default model.
A change applies when the server starts again (`quickfill-restart')."
  :type '(choice (const :tag "Server default" nil) file))

(defcustom quickfill-log-level nil
  "Server log level (--log-level): trace, debug, info, warn or error; nil for the default."
  :type '(choice (const nil) string))

(defcustom quickfill-log-file nil
  "File the server also writes its log to (--log-file), or nil."
  :type '(choice (const nil) file))

(defcustom quickfill-settings nil
  "Further server settings as a plist, merged into the \"quickfill\" object.
Example: (:completion (:autoDeadlineMs 150 :explicitDeadlineMs 2000))."
  :type 'plist)

(defcustom quickfill-major-modes
  '(c-mode c++-mode c-ts-mode c++-ts-mode python-mode python-ts-mode js-mode js-ts-mode
    typescript-mode typescript-ts-mode go-mode go-ts-mode rust-mode rust-ts-mode
    java-mode java-ts-mode sh-mode bash-ts-mode emacs-lisp-mode lua-mode ruby-mode)
  "Major modes whose buffers `quickfill-eglot-setup' hands to quickfill."
  :type '(repeat symbol))

;; Never taken from file or directory local variables without asking: they
;; choose a program to run, a file to load or write, or the settings sent.
(dolist (v '(quickfill-program quickfill-model quickfill-log-level quickfill-log-file quickfill-settings))
  (put v 'risky-local-variable t))

(defclass quickfill-eglot-server (eglot-lsp-server) ()
  :documentation "The quickfill language server.")

(defun quickfill--plist-merge (base over)
  "Merge plist OVER into plist BASE; nested plists are merged key by key."
  (let ((out (copy-sequence base)))
    (cl-loop for (k v) on over by #'cddr
             do (let ((old (plist-get out k)))
                  (setq out (plist-put out k
                                       (if (and (consp v) (keywordp (car v))
                                                (consp old) (keywordp (car old)))
                                           (quickfill--plist-merge old v)
                                         v)))))
    out))

(defun quickfill-server-settings ()
  "The \"quickfill\" settings object (a plist) sent to the server.
The model is not in it: it goes on the command line (`quickfill-command').
`quickfill-exclude' goes in privacy.exclude (the server adds it to its list)."
  (let ((s (copy-tree quickfill-settings)))
    (if (null quickfill-exclude)
        s
      (let* ((privacy (plist-get s :privacy))
             (given (plist-get privacy :exclude)))
        (plist-put s :privacy (plist-put (copy-sequence privacy) :exclude
                                         (vconcat given quickfill-exclude)))))))

(defun quickfill-command ()
  "The command line that starts the server over stdio."
  (append (list (if (file-name-absolute-p quickfill-program)
                    (expand-file-name quickfill-program)
                  quickfill-program)
                "--stdio")
          (and quickfill-model (list "--model" (expand-file-name quickfill-model)))
          (and quickfill-log-level (list "--log-level" quickfill-log-level))
          (and quickfill-log-file (list "--log-file" (expand-file-name quickfill-log-file)))))

(defun quickfill-eglot-contact (&optional _interactive)
  "An `eglot-server-programs' contact for quickfill."
  (cons 'quickfill-eglot-server (quickfill-command)))

(cl-defmethod eglot-initialization-options ((_server quickfill-eglot-server))
  "Send the quickfill settings as initializationOptions."
  (list :quickfill (or (quickfill-server-settings) (make-hash-table))))

(cl-defmethod eglot-handle-request
  ((_server quickfill-eglot-server) (_method (eql workspace/configuration)) &key items)
  "Answer workspace/configuration: the \"quickfill\" section gets the quickfill settings."
  (apply #'vector
         (mapcar (lambda (item)
                   (let ((section (plist-get item :section)))
                     (cond ((equal section "quickfill")
                            (or (quickfill-server-settings) (make-hash-table)))
                           ((or (null section) (equal section ""))
                            (list :quickfill (or (quickfill-server-settings) (make-hash-table))))
                           (t nil))))
                 items)))

;;;###autoload
(defun quickfill-eglot-setup (&optional modes)
  "Register quickfill with eglot for MODES (default `quickfill-major-modes').
Call `eglot' or `eglot-ensure' in such a buffer to start it."
  (let ((modes (or modes quickfill-major-modes)))
    (setq eglot-server-programs
          (cons (cons modes #'quickfill-eglot-contact)
                (cl-remove-if (lambda (entry) (eq (cdr entry) #'quickfill-eglot-contact))
                              eglot-server-programs)))))

(defun quickfill--servers ()
  "Every running quickfill server."
  (let (out)
    (maphash (lambda (_project servers)
               (dolist (s servers)
                 (when (and (cl-typep s 'quickfill-eglot-server) (jsonrpc-running-p s))
                   (push s out))))
             eglot--servers-by-project)
    out))

(defun quickfill-update-settings ()
  "Send the current `quickfill-settings' to every running quickfill server.
`quickfill-model', `quickfill-program' and the log options are on the command
line: they apply when the server starts again (`quickfill-restart')."
  (interactive)
  (dolist (s (quickfill--servers))
    (jsonrpc-notify s :workspace/didChangeConfiguration
                    (list :settings (list :quickfill (or (quickfill-server-settings)
                                                         (make-hash-table)))))))

(defun quickfill--current-server ()
  (let ((s (eglot-current-server)))
    (unless (cl-typep s 'quickfill-eglot-server)
      (user-error "No quickfill server manages this buffer"))
    s))

(defun quickfill-status ()
  "The server's quickfill/status answer: :modelLoaded, :modelLoading, :model, ...
:daemon is nil in process, else a plist of :pid :socket :sessions :engines
:sessionsOnEngine (how many editor windows share the model)."
  (jsonrpc-request (quickfill--current-server) :quickfill/status (make-hash-table)))

(defun quickfill-sources-summary (stats status)
  "One line per completion source of STATS (quickfill/stats :sources), with
the state and last error of STATUS (quickfill/status :sources)."
  (let ((health (make-hash-table :test #'equal)) lines)
    (mapc (lambda (h) (puthash (plist-get h :name) h health)) (plist-get status :sources))
    (mapc (lambda (s)
            (let* ((h (gethash (plist-get s :name) health))
                   (n (or (plist-get s :requests) 0)) (e (or (plist-get s :errors) 0))
                   (lat (plist-get s :latencyMs))
                   (err (plist-get h :lastError))
                   (line (format "%s (%s, %s): %d request%s, %d error%s, %d+%d tokens"
                                 (plist-get s :name) (plist-get s :kind)
                                 (or (plist-get h :state) (plist-get s :state))
                                 n (if (= n 1) "" "s") e (if (= e 1) "" "s")
                                 (or (plist-get s :promptTokens) 0) (or (plist-get s :completionTokens) 0))))
              (when (> (or (plist-get lat :count) 0) 0)
                (setq line (format "%s, p50/p90 %d / %d ms" line
                                   (round (plist-get lat :p50)) (round (plist-get lat :p90)))))
              (when (and (stringp err) (> (length err) 0))
                (setq line (concat line " -- last error: " err)))
              (push line lines)))
          (plist-get stats :sources))
    (nreverse lines)))

(defun quickfill-stats ()
  "Return (and, interactively, show) the server's quickfill/stats answer.
It holds request counts, latency percentiles (:totalMs, :ttftMs) and the
most recent requests (:recent, oldest first)."
  (interactive)
  (let ((stats (jsonrpc-request (quickfill--current-server) :quickfill/stats (make-hash-table))))
    (when (called-interactively-p 'interactive)
      (with-current-buffer (get-buffer-create "*quickfill stats*")
        (erase-buffer)
        (let* ((status (quickfill-status))
               (sources (quickfill-sources-summary stats status)))
          (when sources
            (insert "Completion sources:\n" (mapconcat (lambda (l) (concat "  " l "\n")) sources "")))
          (insert (pp-to-string (list :status status :stats stats))))
        (display-buffer (current-buffer))))
    stats))

(defcustom quickfill-dashboard-file
  (expand-file-name "quickfill-dashboard.html" temporary-file-directory)
  "Where `quickfill-dashboard' writes the dashboard page before opening it."
  :type 'file :group 'quickfill)

(defun quickfill-write-dashboard (&optional file)
  "Write the server's dashboard page (quickfill/report) to FILE; return FILE.
FILE defaults to `quickfill-dashboard-file'.  The page is self-contained
HTML: latency histograms, percentiles over time and the SLO's burn."
  (let* ((file (or file quickfill-dashboard-file))
         (answer (jsonrpc-request (quickfill--current-server) :quickfill/report (make-hash-table)))
         (html (plist-get answer :html)))
    (unless (stringp html) (error "quickfill/report: the answer has no html"))
    (let ((coding-system-for-write 'utf-8-unix))
      (with-temp-file file (insert html)))
    file))

(defun quickfill-dashboard ()
  "Write the dashboard page (see `quickfill-write-dashboard') and open it.
It opens with `browse-url-of-file' (the system's browser, or eww)."
  (interactive)
  (browse-url-of-file (quickfill-write-dashboard)))

(defun quickfill-doctor ()
  "Run `quickfill doctor' and show its report in the *quickfill doctor* buffer.
It is the same program and model the server starts with (`quickfill-program',
`quickfill-model'): the build, CPU, GPU, model, daemon, the user config file
and the folders, each problem with what to do -- what to paste into a bug
report.  Returns the program's exit status (0: no check failed)."
  (interactive)
  (let* ((cmd (quickfill-command))
         (args (append (list "doctor")
                       (and quickfill-model (list "--model" (expand-file-name quickfill-model)))))
         (buf (get-buffer-create "*quickfill doctor*"))
         status)
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (setq status (apply #'call-process (car cmd) nil t nil args)))
      (goto-char (point-min))
      (special-mode))
    (when (called-interactively-p 'interactive) (display-buffer buf))
    (unless (eql status 0) (message "quickfill doctor found problems (see *quickfill doctor*)"))
    status))

(defun quickfill-explanation ()
  "The server's quickfill/explainCompletion answer at point.
A plist: :format, :prompt (the whole prompt), :tokens and :parts, a vector
of plists (:kind :origin :text :tokens) in prompt order."
  (jsonrpc-request (quickfill--current-server) :quickfill/explainCompletion
                   (eglot--TextDocumentPositionParams)))

(defun quickfill-explain ()
  "Show the prompt a completion at point would give the model.
The *quickfill-explain* buffer lists the prompt's parts (kind, tokens,
origin), the confidence gate of each trigger kind and where it came from,
then the prompt itself."
  (interactive)
  (let* ((e (quickfill-explanation))
         (parts (append (plist-get e :parts) nil)))
    (with-current-buffer (get-buffer-create "*quickfill-explain*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "quickfill prompt: %s format, %d tokens in %d parts\n\n"
                        (plist-get e :format) (plist-get e :tokens) (length parts)))
        (insert (format "%-10s %7s  %s\n" "part" "tokens" "origin"))
        (dolist (p parts)
          (let ((origin (plist-get p :origin)))
            (insert (format "%-10s %7d  %s\n" (plist-get p :kind) (plist-get p :tokens)
                            (if (equal origin "") "-" origin)))))
        ;; The confidence gate of each trigger kind and where it came from.
        (dolist (kind '(:automatic :explicit))
          (let ((g (plist-get (plist-get e :gate) kind)))
            (when (numberp (plist-get g :threshold))
              (insert (format "confidence gate, %s triggers: %.2f (%s)\n" (substring (symbol-name kind) 1)
                              (plist-get g :threshold) (plist-get g :origin))))))
        (insert "\n----- prompt -----\n" (plist-get e :prompt) "\n----- end of prompt -----\n")
        (goto-char (point-min)))
      (special-mode)
      (display-buffer (current-buffer)))
    e))

;;;; Acceptance reports

;; What is shown and what is taken goes to the server as quickfill/didShow and
;; quickfill/didAccept (its acceptance counts, `quickfill-stats'); nothing
;; leaves the machine.  Completion items (the menu of `completion-at-point',
;; company or corfu) are reported by wrapping what `eglot-completion-at-point'
;; returns in quickfill buffers: the menu counts as shown once its candidates
;; are listed (with the first one's length), and as accepted when a candidate
;; is chosen (status `finished').

(defun quickfill--encoded-length (text)
  "Length of TEXT in the server's position encoding (UTF-16 unless it chose another)."
  (let ((enc (ignore-errors (plist-get (eglot--capabilities (eglot-current-server)) :positionEncoding))))
    (cond ((equal enc "utf-8") (string-bytes text))
          ((equal enc "utf-32") (length text))
          (t (/ (length (encode-coding-string text 'utf-16le)) 2)))))

(defun quickfill--notify (method params)
  "Send notification METHOD with PARAMS to this buffer's quickfill server."
  (jsonrpc-notify (quickfill--current-server) method params))

(defvar quickfill--report-ids 0)

(defun quickfill--report-id (kind)
  "A new id for a suggestion of KIND shown in this Emacs."
  (format "emacs-%s-%d-%d" kind (emacs-pid) (cl-incf quickfill--report-ids)))

(defun quickfill--quickfill-buffer-p ()
  "Non-nil when this buffer's eglot server is quickfill."
  (let ((s (ignore-errors (eglot-current-server))))
    (and s (cl-typep s 'quickfill-eglot-server))))

(defun quickfill--capf-with-reports (capf)
  "CAPF (what `eglot-completion-at-point' returned) reporting shown and accepted items."
  (pcase capf
    ((and `(,beg ,end ,table . ,props) (guard (functionp table)) (guard (quickfill--quickfill-buffer-p)))
     (let* ((id (quickfill--report-id "completion"))
            (trigger (if (memq this-command '(completion-at-point complete-symbol)) "explicit" "automatic"))
            (shown nil)
            (exit (plist-get props :exit-function))
            (reporting-table
             (lambda (string pred action)
               (let ((r (funcall table string pred action)))
                 (when (and (not shown) (memq action '(nil t)) r)
                   (let ((first (car (all-completions string table pred))))
                     (when (stringp first)
                       (setq shown (quickfill--encoded-length first))
                       (quickfill--notify :quickfill/didShow
                                          (list :id id :source "completion" :trigger trigger :length shown)))))
                 r))))
       `(,beg ,end ,reporting-table
              ,@(plist-put (copy-sequence props) :exit-function
                           (lambda (string status)
                             (when exit (funcall exit string status))
                             (when (and shown (eq status 'finished))
                               (quickfill--notify :quickfill/didAccept
                                                  (list :id id :acceptedLength
                                                        (min shown (quickfill--encoded-length string))))))))))
    (_ capf)))

(advice-add 'eglot-completion-at-point :filter-return #'quickfill--capf-with-reports)

;;;; Inline suggestions with a cycle key

(defvar-local quickfill--shown nil
  "The suggestion `quickfill-complete' inserted: (START-MARKER END-MARKER TEXTS INDEX ID).")

(defvar quickfill-cycle-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "M-]") #'quickfill-next-candidate)
    (define-key map (kbd "M-[") #'quickfill-previous-candidate)
    map)
  "Active right after `quickfill-complete' (and while cycling): switch suggestions.")

(defun quickfill--inline-texts ()
  "The texts an explicit textDocument/inlineCompletion at point would insert, best first."
  (eglot--signal-textDocument/didChange)  ; the server must see the text as it is now
  (let* ((params (append (eglot--TextDocumentPositionParams) (list :context (list :triggerKind 1))))
         (result (jsonrpc-request (quickfill--current-server) :textDocument/inlineCompletion params))
         (items (append (if (vectorp result) result (plist-get result :items)) nil))
         texts)
    (dolist (it items)
      (let ((text (plist-get it :insertText))
            (range (plist-get it :range)))
        (when (and (stringp text) range)
          ;; The item replaces the word before point: insert only what follows it.
          (let ((typed (buffer-substring-no-properties
                        (eglot--lsp-position-to-point (plist-get range :start)) (point))))
            (when (string-prefix-p typed text) (setq text (substring text (length typed))))))
        (when (and (stringp text) (not (string-empty-p text)) (not (member text texts)))
          (push text texts))))
    (nreverse texts)))

(defun quickfill--show (texts index)
  "Put the INDEX-th of TEXTS where the shown suggestion is; report it shown."
  (pcase-let ((`(,start ,end . ,_) quickfill--shown))
    (delete-region start end)
    (goto-char start)
    (let ((text (nth index texts))
          (id (quickfill--report-id "inline")))
      (insert text)
      (setq quickfill--shown (list start (copy-marker (point)) texts index id))
      (quickfill--notify :quickfill/didShow
                         (list :id id :source "inline" :trigger "explicit" :length (quickfill--encoded-length text)))
      text)))

(defun quickfill--inline-settle ()
  "Report how much of the suggestion `quickfill-complete' inserted is still there.
Runs after the first command that is not a cycle command: the text from the
suggestion's start that still matches it counts as accepted (all of it when
untouched, none after an undo)."
  (remove-hook 'post-command-hook #'quickfill--inline-settle t)
  (pcase-let ((`(,start ,_ ,texts ,index ,id) quickfill--shown))
    (setq quickfill--shown nil)
    (when (and id (marker-buffer start))
      (let* ((text (nth index texts))
             (have (buffer-substring-no-properties start (min (point-max) (+ start (length text)))))
             (n (compare-strings text nil nil have nil nil))
             (kept (if (eq n t) text (substring text 0 (1- (abs n))))))
        (unless (string-empty-p kept)
          (quickfill--notify :quickfill/didAccept (list :id id :acceptedLength (quickfill--encoded-length kept))))))))

(defun quickfill-complete ()
  "Insert the server's best suggestion at point; M-] / M-[ right after it cycle.
Returns the inserted text, or nil when the server had none."
  (interactive)
  (let ((texts (quickfill--inline-texts)))
    (if (null texts)
        (progn (when (called-interactively-p 'interactive) (message "quickfill: no suggestion")) nil)
      (setq quickfill--shown (list (copy-marker (point)) (copy-marker (point)) texts 0))
      (prog1 (quickfill--show texts 0)
        (set-transient-map quickfill-cycle-map t
                           (lambda () (add-hook 'post-command-hook #'quickfill--inline-settle nil t)))))))

(defun quickfill-next-candidate (&optional step)
  "Replace the suggestion `quickfill-complete' inserted by the next one (STEP ahead).
After the last comes the first.  Returns the text now shown."
  (interactive)
  (pcase-let ((`(,_ ,_ ,texts ,index . ,_) quickfill--shown))
    (unless texts (user-error "No quickfill suggestion to cycle"))
    (quickfill--show texts (mod (+ index (or step 1)) (length texts)))))

(defun quickfill-previous-candidate ()
  "Replace the suggestion `quickfill-complete' inserted by the previous one."
  (interactive)
  (quickfill-next-candidate -1))

(defun quickfill-show-log ()
  "Show the server's stderr log (and its protocol events buffer)."
  (interactive)
  (let ((s (quickfill--current-server)))
    (if (fboundp 'jsonrpc-stderr-buffer)
        (display-buffer (jsonrpc-stderr-buffer s))
      (display-buffer (jsonrpc-events-buffer s)))
    (when quickfill-log-file
      (find-file-other-window (expand-file-name quickfill-log-file)))))

(defun quickfill-restart ()
  "Restart the quickfill server of this buffer with the current quickfill-* settings.
The command line is made again, so a new `quickfill-model' applies (where
`eglot-reconnect' would start the old command line)."
  (interactive)
  (let ((server (quickfill--current-server)))
    (eglot-shutdown server)
    (apply #'eglot (eglot--guess-contact))))

(require 'quickfill-privacy)  ; private buffers are never managed for quickfill

(provide 'quickfill)
;;; quickfill.el ends here
